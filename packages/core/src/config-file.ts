/**
 * A command's config as a JSON file (`--config FILE`) and the layers laid over it: reading it (one-line
 * errors naming the file) and merging one config object into another.
 */
import { readFile } from 'node:fs/promises';
import { CoreError } from './errors.js';

/** Read a JSON config file (missing file, bad JSON: one-line `CoreError`s naming the file). */
export async function readConfigFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CoreError(
      'read_failed',
      `cannot read config: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
      { file },
      { cause: err },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new CoreError('invalid_config', `config is not JSON: ${(err as Error).message}`, { file }, { cause: err });
  }
}

/** The `--config` file's JSON object (`{}` without one); a file holding anything else is an error naming it. */
export async function readConfigObject(file: string | undefined): Promise<Record<string, unknown>> {
  const raw = file === undefined ? {} : await readConfigFile(file);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new CoreError('invalid_config', 'config must be a JSON object', { file });
  return { ...(raw as Record<string, unknown>) };
}

/** `base` with `over` laid on top: objects merge key by key, anything else (arrays included) replaces. */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    const isObj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);
    out[k] = isObj(b) && isObj(v) ? deepMerge(b, v) : v;
  }
  return out;
}
