import { z } from 'zod';
import { AdvantagesError } from './errors.js';
import { applyWeights } from './metrics.js';
import type { MergedSchema } from './option-types.js';
import { defineMethod } from './method.js';
import type { AdvantageEstimator, ConfigSchema, SequenceBaseline, TokenWeighting } from './types.js';

/**
 * One strict schema holding both parts' options. A key declared by both parts is
 * a programming error and throws `config_clash` at composition time. Each part's
 * own cross-field checks (e.g. GRAIL's wMin <= wMean <= wMax) run again on its keys.
 */
export function mergeConfigSchemas<B extends ConfigSchema, W extends ConfigSchema>(
  name: string,
  baseline: SequenceBaseline<B>,
  weighting: TokenWeighting<W>,
): MergedSchema<B, W> {
  const shape: Record<string, z.ZodType> = {};
  const owner = new Map<string, string>();
  for (const [part, schema] of [
    [`baseline ${baseline.name}`, baseline.configSchema],
    [`weighting ${weighting.name}`, weighting.configSchema],
  ] as const) {
    for (const [key, field] of Object.entries(schema.shape)) {
      if (owner.has(key)) {
        throw new AdvantagesError(
          'config_clash',
          `estimator ${name}: option "${key}" is declared by both ${owner.get(key)} and ${part}; rename one of them`,
          { field: key },
        );
      }
      shape[key] = field as z.ZodType;
      owner.set(key, part);
    }
  }
  const parts = [baseline.configSchema, weighting.configSchema];
  const merged = z.strictObject(shape).superRefine((value, ctx) => {
    for (const schema of parts) {
      const own: Record<string, unknown> = {};
      for (const key of Object.keys(schema.shape)) own[key] = (value as Record<string, unknown>)[key];
      const result = schema.safeParse(own);
      if (!result.success)
        for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    }
  });
  // the shape is the two parts' keys, so its type is theirs (zod cannot infer a shape built in a loop)
  return merged as unknown as MergedSchema<B, W>;
}

/**
 * Compose a sequence baseline with a token weighting into an estimator (an instance of the general
 * contract, `defineMethod`): advantages[t] = sequenceAdvantages[i] * weights[t] for token t of
 * rollout i. `name` defaults to `baseline+weighting`.
 */
export function composeEstimator<B extends ConfigSchema, W extends ConfigSchema>(
  baseline: SequenceBaseline<B>,
  weighting: TokenWeighting<W>,
  name = `${baseline.name}+${weighting.name}`,
  description?: string,
): AdvantageEstimator<MergedSchema<B, W>> {
  const configSchema = mergeConfigSchemas(name, baseline, weighting);
  const method = defineMethod({
    name,
    description: description ?? `${baseline.description}; ${weighting.description}`,
    configSchema,
    needs: weighting.needs,
    batchCoupled: baseline.batchCoupled as boolean | ((config: unknown) => boolean),
    compute({ batch, signals, config }, advantages) {
      const sequenceAdvantages = new Float64Array(batch.numRollouts);
      const baselineMetrics = baseline.compute(batch, config as z.output<B>, sequenceAdvantages);
      const weights = new Float32Array(advantages.length);
      const weightingMetrics = weighting.compute(batch, signals, sequenceAdvantages, config as z.output<W>, weights);
      const weightStats = applyWeights(batch, weights, sequenceAdvantages, advantages);
      return { weights, sequenceAdvantages, metrics: { ...baselineMetrics, ...weightingMetrics, ...weightStats } };
    },
  });
  return { ...method, baseline: baseline as SequenceBaseline, weighting: weighting as TokenWeighting };
}
