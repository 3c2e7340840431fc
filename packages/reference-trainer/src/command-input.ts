/**
 * Pieces the commands share to turn flags into a config: the `--config` JSON object, `--plugin`
 * flags appended to its `plugins`. Errors are `ReferenceTrainerError`s naming the file.
 */
import { intFlag, usageError } from '@rlvr/core';
import type { FlagSpec, FlagValues } from '@rlvr/core';
import { ReferenceTrainerError } from './errors.js';
import { readFile } from 'node:fs/promises';

/** The `--config` file's JSON object (`{}` without one); a file holding anything else is an error naming it. */
export async function readConfigObject(file: string | undefined): Promise<Record<string, unknown>> {
  const raw = file === undefined ? {} : await readConfigFile(file);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new ReferenceTrainerError('invalid_config', 'config must be a JSON object', { file });
  return { ...(raw as Record<string, unknown>) };
}

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

/** Read a JSON config file (missing file, bad JSON: one-line errors naming the file). */
export async function readConfigFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ReferenceTrainerError(
      code === 'ENOENT' ? 'missing_file' : 'read_failed',
      `cannot read config: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
      { file },
      { cause: err },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ReferenceTrainerError('invalid_config', `config is not JSON: ${(err as Error).message}`, { file }, { cause: err });
  }
}

/** `--workers N|auto`: a count of policy worker threads (1 .. 256) or `auto`; anything else is a usage error. */
export function workersFlag(value: string): number | 'auto' {
  if (value === 'auto') return value;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 256)
    throw usageError(`must be auto or an integer from 1 to 256, got ${JSON.stringify(value)}`, '--workers');
  return n;
}
