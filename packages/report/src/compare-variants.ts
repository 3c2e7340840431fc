/**
 * Named variants of `rlvr compare` (`@rlvr/reference-trainer`): a row that trains a registered estimator with its own
 * estimator, saliency and trainer options, so an ablation (GRAIL with `symmetry: "both"`, the
 * last box, a per-mini-batch refresh) is one more row of one comparison, without a plugin.
 */
import { CoreError, deepMerge, formatLocation } from '@rlvr/core';
import type { ErrorLocation } from '@rlvr/core';
import { z } from 'zod';

const Options = z.record(z.string(), z.unknown());

/** One variant: a registered estimator and what it changes in the compared train config. */
export const VariantSchema = z
  .object({
    /** a registered estimator (or `BASELINE+WEIGHTING`) */
    estimator: z.string().min(1),
    /** laid over the estimator's options (`estimatorConfigs[estimator]`, else the config's `estimatorConfig`) */
    estimatorConfig: Options.optional(),
    /** merged key by key into the config's `saliency` (e.g. `{"refresh": "minibatch", "box": "last"}`) */
    saliency: Options.optional(),
    /** merged key by key into the config's `trainer` (e.g. `{"epochs": 4}`) */
    trainer: Options.optional(),
  })
  .strict();
export type Variant = z.output<typeof VariantSchema>;

/** A row name: it is also a directory name (`OUT/NAME/seed-S`). */
const NAME = /^[A-Za-z0-9_.+-]+$/;

/** `variants` of a compare config, by name; `{}` without one. Errors name `variants.NAME.KEY` and the file. */
export function parseVariants(raw: unknown, file?: string): Record<string, Variant> {
  const at = (field: string) => ({ ...(file === undefined ? {} : { file }), field });
  if (raw === undefined) return {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new CoreError(
      'invalid_config',
      'must be an object of variants by name, e.g. {"grail-both": {"estimator": "grail", "estimatorConfig": {"symmetry": "both"}}}',
      at('variants'),
    );
  }
  const out: Record<string, Variant> = {};
  for (const [name, v] of Object.entries(raw)) {
    if (!NAME.test(name))
      throw new CoreError(
        'invalid_config',
        'a variant name is letters, digits and _ . + - only (it names a directory)',
        at(`variants.${name}`),
      );
    const r = VariantSchema.safeParse(v);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      const key = issue.code === 'unrecognized_keys' ? issue.keys[0] : issue.path.map(String).join('.');
      const message =
        issue.code === 'unrecognized_keys' ? `unknown key (a variant has ${Object.keys(VariantSchema.shape).join(', ')})` : issue.message;
      throw new CoreError('invalid_config', message, at(`variants.${name}${key === undefined || key === '' ? '' : `.${key}`}`), {
        cause: r.error,
      });
    }
    out[name] = r.data;
  }
  return out;
}

/**
 * The train config input of variant `v`: `base` (the compare config less `variants` and
 * `estimatorConfigs`, seed and steps set) with the variant's estimator, its options laid over
 * that estimator's options in `perEstimator` (else `base.estimatorConfig`), and its saliency and
 * trainer options merged into the config's.
 */
export function variantInput(
  base: Record<string, unknown>,
  v: Variant,
  perEstimator: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const obj = (x: unknown): Record<string, unknown> =>
    x !== null && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
  const input: Record<string, unknown> = { ...base, estimator: v.estimator };
  const options = perEstimator[v.estimator] ?? base.estimatorConfig;
  input.estimatorConfig = { ...obj(options), ...(v.estimatorConfig ?? {}) };
  if (v.saliency !== undefined) input.saliency = deepMerge(obj(base.saliency), v.saliency);
  if (v.trainer !== undefined) input.trainer = deepMerge(obj(base.trainer), v.trainer);
  return input;
}

/** `err` (a config error of a variant) as one line naming `field` (`variants.NAME.KEY...`) and the file; the error's own location gives way to them. */
export function variantError(field: string, err: unknown, file?: string): CoreError {
  const e = err as { message?: string; location?: ErrorLocation };
  const own = e.location === undefined ? '' : formatLocation(e.location);
  const message = String(e.message).startsWith(own) ? String(e.message).slice(own.length) : String(e.message);
  return new CoreError('invalid_config', message, { ...(file === undefined ? {} : { file }), field }, { cause: err });
}
