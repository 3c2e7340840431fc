/**
 * Pieces the commands share to turn flags into a config (the `--config` file itself is core's
 * `readConfigObject`): `--plugin` flags appended to its `plugins`, `--steps`, `--seed`, `--workers`.
 */
import { intFlag, usageError } from '@rlvr/core';
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

/** `--workers N|auto`: a count of policy worker threads (1 .. 256) or `auto`; anything else is a usage error. */
export function workersFlag(value: string): number | 'auto' {
  if (value === 'auto') return value;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 256)
    throw usageError(`must be auto or an integer from 1 to 256, got ${JSON.stringify(value)}`, '--workers');
  return n;
}
