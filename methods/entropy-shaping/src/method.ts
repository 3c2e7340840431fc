import { AdvantagesError, defineMethod, type AdvantageEstimator, type ConfigSchema } from '@rlvr/advantages';
import { SIGNAL_NAMES } from '@rlvr/core';
import { z } from 'zod';
import { shapeAdvantages } from './shaping.js';

/** The shaping's own options. */
export const EntropyShapingOptions = {
  /** scale of the entropy term (alpha) */
  alpha: z.number().nonnegative().default(0.4),
  /** the term is at most |A| / kappa; > 1 so it never flips the advantage's sign */
  kappa: z.number().gt(1).default(2),
};

/**
 * Entropy shaping on top of any estimator `base` (its per-token advantages A, its weights, its
 * state): a method of the general contract (`defineMethod`) that reads `policy.entropy` besides what
 * `base` needs, with `base`'s options plus `alpha` and `kappa` in one strict schema (`base`'s own
 * checks run again on its keys). A base that declares `alpha` or `kappa` throws `config_clash`.
 */
export function entropyShaping(base: AdvantageEstimator, name: string, description: string): AdvantageEstimator<ConfigSchema> {
  const own = Object.keys(EntropyShapingOptions);
  for (const key of own)
    if (key in base.configSchema.shape)
      throw new AdvantagesError('config_clash', `estimator ${name}: option "${key}" is declared by both ${base.name} and entropy shaping`, {
        field: key,
      });
  const configSchema = z.strictObject({ ...base.configSchema.shape, ...EntropyShapingOptions }).superRefine((value, ctx) => {
    const mine = Object.fromEntries(Object.entries(value).filter(([k]) => !own.includes(k)));
    const r = base.configSchema.safeParse(mine);
    if (!r.success) for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });
  const needs = [...new Set([...base.needs, SIGNAL_NAMES.entropy])];
  return defineMethod({
    name,
    description,
    configSchema,
    needs,
    batchCoupled: base.batchCoupled as boolean | ((config: unknown) => boolean),
    compute({ batch, signals, config, state }, out) {
      const entropy = signals.get(SIGNAL_NAMES.entropy, `estimator ${name}`); // [T], detached: a constant
      const a = base.estimate(batch, signals, config, state);
      const metrics = shapeAdvantages(batch, a.advantages, entropy, config.alpha as number, config.kappa as number, out);
      const result = { weights: a.weights, sequenceAdvantages: a.sequenceAdvantages, metrics: { ...a.metrics, ...metrics } };
      return a.state === undefined ? result : { ...result, state: a.state };
    },
  }) as AdvantageEstimator<ConfigSchema>;
}
