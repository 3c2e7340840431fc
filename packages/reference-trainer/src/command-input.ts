/**
 * Pieces the commands share to turn flags into a config: the `--config` JSON object, `--plugin`
 * flags appended to its `plugins`, integer flags. Errors are `ReferenceTrainerError`s (the CLI
 * exits 2 for `invalid_options` and `invalid_config`).
 */
import { ReferenceTrainerError } from './errors.js';
import { readConfigFile } from './pretrain/config.js';

/** The `--config` file's JSON object (`{}` without one); a file holding anything else is an error naming it. */
export async function readConfigObject(file: string | undefined): Promise<Record<string, unknown>> {
  const raw = file === undefined ? {} : await readConfigFile(file);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ReferenceTrainerError('invalid_config', 'config must be a JSON object', { file });
  return { ...(raw as Record<string, unknown>) };
}

/** `config` with the `--plugin` flags after the plugins it lists. */
export function withPlugins(config: Record<string, unknown>, flags: readonly string[] | undefined): Record<string, unknown> {
  if (flags === undefined) return config;
  return { ...config, plugins: [...(Array.isArray(config.plugins) ? (config.plugins as unknown[]) : []), ...flags] };
}

/** A non-negative integer flag value. */
export function nonNegativeInt(flag: string, value: string): number {
  if (!/^\d+$/.test(value)) throw new ReferenceTrainerError('invalid_options', `--${flag} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return Number(value);
}
