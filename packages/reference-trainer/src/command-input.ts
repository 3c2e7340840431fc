/**
 * Pieces the commands share to turn flags into a config (the `--config` file itself is core's
 * `readConfigObject`): `--plugin` flags appended to its `plugins`, `--steps`, `--seed` (`--workers` is core's `workersFlag`).
 */
import { intFlag } from '@rlvr/core';
import type { FlagSpec, FlagValues } from '@rlvr/core';

/** `config` with the `--plugin` flags after the plugins it lists. */
export function withPlugins(config: Record<string, unknown>, flags: readonly string[] | undefined): Record<string, unknown> {
  if (flags === undefined) return config;
  return { ...config, plugins: [...(Array.isArray(config.plugins) ? (config.plugins as unknown[]) : []), ...flags] };
}

/** The flags every config-driven command takes (train, compare, pretrain). */
export const CONFIG_FLAGS = {
  config: { type: 'string', short: 'c' },
  steps: { type: 'string' },
  out: { type: 'string', short: 'o' },
  quiet: { type: 'boolean', short: 'q' },
} as const satisfies FlagSpec;

/** `--steps` and `--seed` (when given) set on `config`; out-of-range values are usage errors naming the flag. */
export function withStepsAndSeed(config: Record<string, unknown>, values: FlagValues): Record<string, unknown> {
  const steps = intFlag(values, 'steps', { min: 1 });
  const seed = intFlag(values, 'seed', { min: 0, max: 0xffffffff });
  return { ...config, ...(steps === undefined ? {} : { steps }), ...(seed === undefined ? {} : { seed }) };
}
