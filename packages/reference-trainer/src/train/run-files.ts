import { constants, existsSync } from 'node:fs';
import { access, copyFile, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { PRUNED_FILE, saveModel } from '@rlvr/policy';
import type { Qwen3Model } from '@rlvr/policy';
import { writeFileAtomic } from '../atomic-write.js';
import { ReferenceTrainerError } from '../errors.js';

/** Tokenizer files copied from the starting checkpoint into `OUT/model`. */
const TOKENIZER_FILES = [PRUNED_FILE, 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'generation_config.json'];

/** Keep the records of a JSONL file with `step <= last` (rewritten atomically); a missing file stays missing. */
export async function truncateJsonl(file: string, last: number): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return;
  }
  const kept = text.split('\n').filter((line) => line.trim() !== '' && (JSON.parse(line) as { step: number }).step <= last);
  await writeFileAtomic(file, kept.map((l) => l + '\n').join(''));
}

/** Write the policy as a model directory (weights + the starting checkpoint's tokenizer files) via a temporary directory and a rename. */
export async function exportModel(model: Qwen3Model, from: string, dir: string): Promise<void> {
  const tmp = `${dir}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  saveModel(model, tmp);
  for (const f of TOKENIZER_FILES) if (existsSync(join(from, f))) await copyFile(join(from, f), join(tmp, f));
  await rm(dir, { recursive: true, force: true });
  await rename(tmp, dir);
}

/** Fail before any work when `dir` could not be created: its nearest existing ancestor is a file or not writable. */
export async function assertCreatable(dir: string): Promise<void> {
  let p = resolve(dir);
  for (;;) {
    const st = await stat(p).catch(() => null);
    if (st !== null) {
      const fail = (code: string) => {
        throw new ReferenceTrainerError('write_failed', `cannot create the output directory ${dir}: ${mkdirReason(Object.assign(new Error(code), { code }))}`, { file: dir });
      };
      if (!st.isDirectory()) fail(p === resolve(dir) ? 'EEXIST' : 'ENOTDIR');
      await access(p, constants.W_OK).catch(() => fail('EACCES'));
      return;
    }
    const up = dirname(p);
    if (up === p) return;
    p = up;
  }
}

export function mkdirReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOTDIR' || code === 'EEXIST') return 'a path component is a file, not a directory';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'permission denied';
  return (err as Error).message;
}
