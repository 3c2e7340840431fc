/**
 * What `rlvr compare` (`@rlvr/reference-trainer`'s `runCompare`) runs: its options as a schema, and the
 * checks among them made before any training.
 */
import { z } from 'zod';

const Seed = z.number().int().min(0).max(0xffffffff);

/** What `rlvr compare` runs. `config` is a train config (file contents); estimator and seed are set per run. */
export const CompareOptionsSchema = z
  .object({
    /** the rows, in this order: registered estimator names, or names of `config.variants` */
    estimators: z.array(z.string().min(1)).min(1),
    /** the seeds every estimator is trained with */
    seeds: z.array(Seed).min(1),
    /**
     * a `rlvr train` config, plus optionally `estimatorConfigs`: options by estimator name
     * (each replaces `estimatorConfig` for that estimator, as one estimator's options rarely fit another's schema),
     * and `variants`: named rows with their own estimator, estimator, saliency and trainer options (`VariantSchema`)
     */
    config: z.record(z.string(), z.unknown()).default({}),
    /** where `config` came from, for error messages */
    configFile: z.string().optional(),
    /** overrides `config.steps` */
    steps: z.number().int().min(1).max(1_000_000).optional(),
    /** OUT: one run directory per estimator and seed, `OUT/ESTIMATOR/seed-S`, and `OUT/compare.json` */
    out: z.string().min(1),
    /** continue finished or partial runs in OUT instead of refusing them */
    resume: z.boolean().default(false),
    /** "steps to threshold": a gain over each run's starting accuracy (default 0.05) or an absolute accuracy */
    threshold: z
      .object({ kind: z.enum(['gain', 'accuracy']), value: z.number().min(0).max(1) })
      .strict()
      .optional(),
    /** the estimator others are compared with (default grpo when compared, else the first) */
    baseline: z.string().min(1).optional(),
    /** the primary contrast [a, b], judged unadjusted (default grail, else the first other row, against the baseline) */
    primary: z.tuple([z.string().min(1), z.string().min(1)]).optional(),
    /**
     * tune each row's learning rate first (`@rlvr/report`'s compare-tune protocol): `grid` on the tuning
     * `seeds` (none a comparison seed), scored on a validation split of `problems` (default eval.problems)
     */
    tune: z
      .strictObject({
        grid: z.array(z.number().positive()).min(2),
        seeds: z.array(Seed).min(1),
        maxWiden: z.number().int().min(0).max(20).default(3),
        problems: z.number().int().min(1).max(100_000).optional(),
      })
      .optional(),
  })
  .strict();
export type CompareOptions = z.output<typeof CompareOptionsSchema>;
export type CompareOptionsInput = z.input<typeof CompareOptionsSchema>;

/** The first problem among the options (a row or seed listed twice, rows sharing a directory, a primary or baseline not compared, a tuning seed that is a comparison seed), or undefined. */
export function compareOptionsProblem(o: CompareOptions, dirOf: (row: string) => string): string | undefined {
  const dup = (xs: readonly (string | number)[]) => xs.find((x, i) => xs.indexOf(x) !== i);
  const among = `is not among the estimators (${o.estimators.join(', ')})`;
  if (dup(o.estimators) !== undefined) return `estimator ${JSON.stringify(dup(o.estimators))} is listed twice`;
  if (dup(o.seeds) !== undefined) return `seed ${dup(o.seeds)} is listed twice`;
  const dirs = o.estimators.map(dirOf);
  if (dup(dirs) !== undefined) return `two estimators map to one directory ${JSON.stringify(dup(dirs))}`;
  for (const e of o.primary ?? [])
    if (!o.estimators.includes(e)) return `primary contrast ${o.primary!.join(':')}: ${JSON.stringify(e)} ${among}`;
  if (o.baseline !== undefined && !o.estimators.includes(o.baseline)) return `baseline ${JSON.stringify(o.baseline)} ${among}`;
  const shared = o.tune?.seeds.filter((x) => o.seeds.includes(x)) ?? [];
  if (dup(o.tune?.seeds ?? []) !== undefined) return `tuning seed ${dup(o.tune!.seeds)} is listed twice`;
  if (dup(o.tune?.grid ?? []) !== undefined) return `the tuning grid lists the rate ${dup(o.tune!.grid)} twice`;
  if (shared.length > 0) return `tuning seed(s) ${shared.join(', ')} also comparison seed(s): tuning and comparison seeds must differ`;
  return undefined;
}
