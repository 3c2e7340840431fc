/**
 * JSON Schemas of the config files, emitted from the zod schemas (core's `configJsonSchema`), so
 * that editors complete and check them.
 * The committed copies in `schema/` are tested to be current; `npm run schema -w
 * @rlvr/reference-trainer` rewrites them.
 */
import { configJsonSchema } from '@rlvr/core';
import type { JsonSchema } from '@rlvr/core';
import { z } from 'zod';
import { VariantSchema } from '@rlvr/report';
import { PretrainConfigSchema } from './pretrain/config.js';
import { TrainConfigSchema } from './train/config.js';

/** Where the committed schemas are published, relative to the package. */
export const CONFIG_SCHEMA_FILES = {
  train: 'schema/train.schema.json',
  compare: 'schema/compare.schema.json',
  pretrain: 'schema/pretrain.schema.json',
} as const;

/** The options of every estimator compared, by name (`rlvr compare` only). */
const EstimatorConfigsSchema = z.record(z.string(), z.record(z.string(), z.unknown()));

/**
 * The JSON Schema of each config file: `train` (`rlvr train --config`, also a run's config.json),
 * `compare` (a train config plus `estimatorConfigs`) and `pretrain`.
 */
export function configJsonSchemas(): Record<keyof typeof CONFIG_SCHEMA_FILES, JsonSchema> {
  return {
    train: finish(
      TrainConfigSchema,
      'rlvr train config',
      "A config file of `rlvr train --config` (and a train run directory's config.json). Every key is optional; defaults are the embedded default.",
      { command: { const: 'train', description: "written into a run directory's config.json by rlvr train" } },
    ),
    compare: finish(
      TrainConfigSchema.extend({
        estimatorConfigs: EstimatorConfigsSchema.optional(),
        variants: z.record(z.string(), VariantSchema).optional(),
      }),
      'rlvr compare config',
      'A config file of `rlvr compare --config`: a train config (estimator and seed are set per run) plus `estimatorConfigs`, the options of each compared estimator by name, and `variants`, named rows with their own estimator, estimator options, saliency and trainer options.',
      {},
    ),
    pretrain: finish(PretrainConfigSchema, 'rlvr pretrain config', 'A config file of `rlvr pretrain --config`. Every key is optional.', {}),
  };
}

/** The embedded checkpoint's absolute path and the trainer's default lr (rlvr train sets 5e-5) would mislead an editor. */
function finish(schema: z.ZodType, title: string, description: string, extra: Record<string, JsonSchema>): JsonSchema {
  return configJsonSchema(schema, { title, description, extra, hideDefaults: ['checkpoint', 'trainer'] });
}
