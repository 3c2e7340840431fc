import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Write a third-party plugin module into `dir` and return its path: it registers the weighting
 * `halved` (every token weighs 0.5, so `grpo+halved` gives half of GRPO's advantages) through the
 * `register(api)` protocol of `rlvr train --plugin`.
 */
export async function writeHalvedPlugin(dir: string): Promise<string> {
  const file = join(dir, 'halved.mjs');
  await writeFile(
    file,
    `export function register(api) {
  api.registerWeighting({ name: 'halved', description: 'every token weighs 0.5', configSchema: api.z.strictObject({}), needs: [], compute(batch, signals, seq, config, out) { out.fill(0.5); return {}; } });
}\n`,
  );
  return file;
}
