/**
 * The type map from registered names to their option schemas, so that
 * `prepareEstimator('grail', { symmetry: 42 })` does not compile. The runtime registries
 * (`registry.ts`) hold the implementations; these interfaces hold their option types, and a
 * third party that registers a part declares its schema here by module augmentation:
 *
 *   declare module '@rlvr/advantages' {
 *     interface WeightingSchemas { entropy: typeof EntropyConfigSchema }
 *   }
 *
 * after which `prepareEstimator('grpo+entropy', { power: 2 })` is checked too. A name the map
 * does not know still compiles, with options typed `Record<string, unknown>` (checked at run time).
 */
import type { z } from 'zod';
import type { DrGrpoConfigSchema } from './baselines/dr-grpo.js';
import type { GrpoConfigSchema } from './baselines/grpo.js';
import type { ReinforcePpBaselineConfigSchema } from './baselines/reinforce-pp-baseline.js';
import type { RlooConfigSchema } from './baselines/rloo.js';
import type { ConfigSchema } from './types.js';
import type { GrailConfigSchema } from './weightings/grail.js';
import type { OarGConfigSchema } from './weightings/oar-g.js';
import type { UniformConfigSchema } from './weightings/uniform.js';

/** Option schemas of the sequence baselines, by registered name. */
export interface BaselineSchemas {
  grpo: typeof GrpoConfigSchema;
  'dr-grpo': typeof DrGrpoConfigSchema;
  rloo: typeof RlooConfigSchema;
  'reinforce-pp-baseline': typeof ReinforcePpBaselineConfigSchema;
}

/** Option schemas of the token weightings, by registered name. */
export interface WeightingSchemas {
  uniform: typeof UniformConfigSchema;
  grail: typeof GrailConfigSchema;
  'oar-g': typeof OarGConfigSchema;
}

/** Option schemas of the estimators registered under a name of their own. */
export interface EstimatorSchemas {
  grpo: MergedSchema<typeof GrpoConfigSchema, typeof UniformConfigSchema>;
  'dr-grpo': MergedSchema<typeof DrGrpoConfigSchema, typeof UniformConfigSchema>;
  rloo: MergedSchema<typeof RlooConfigSchema, typeof UniformConfigSchema>;
  'reinforce-pp-baseline': MergedSchema<typeof ReinforcePpBaselineConfigSchema, typeof UniformConfigSchema>;
  grail: MergedSchema<typeof DrGrpoConfigSchema, typeof GrailConfigSchema>;
  'oar-g': MergedSchema<typeof DrGrpoConfigSchema, typeof OarGConfigSchema>;
}

type ShapeOf<S> = S extends z.ZodObject<infer Shape, z.core.$ZodObjectConfig> ? Shape : never;

/** The strict schema holding a baseline's and a weighting's options (what `composeEstimator` builds). */
export type MergedSchema<B, W> = z.ZodObject<ShapeOf<B> & ShapeOf<W>, z.core.$strict>;

/** Every estimator name the type map knows: the named ones and each `BASELINE+WEIGHTING`. */
export type KnownEstimatorName = (keyof EstimatorSchemas & string) | `${keyof BaselineSchemas & string}+${keyof WeightingSchemas & string}`;

/** The option schema of estimator `N`; the open `ConfigSchema` for a name the map does not know. */
export type SchemaOf<N extends string> = N extends keyof EstimatorSchemas
  ? EstimatorSchemas[N]
  : N extends `${infer B}+${infer W}`
    ? B extends keyof BaselineSchemas
      ? W extends keyof WeightingSchemas
        ? MergedSchema<BaselineSchemas[B], WeightingSchemas[W]>
        : ConfigSchema
      : ConfigSchema
    : ConfigSchema;

/**
 * What a caller may pass as estimator `N`'s options (defaults may be left out). For a name only
 * known at run time (`string`) anything goes, and `prepareEstimator` checks it.
 */
export type EstimatorOptions<N extends string> = string extends N
  ? unknown
  : N extends KnownEstimatorName
    ? z.input<SchemaOf<N>>
    : Record<string, unknown>;

/** Estimator `N`'s resolved options, defaults filled in (`prepareEstimator(...).config`). */
export type EstimatorConfig<N extends string> = N extends KnownEstimatorName ? z.output<SchemaOf<N>> : Record<string, unknown>;
