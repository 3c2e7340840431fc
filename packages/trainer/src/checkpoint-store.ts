import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { CheckpointReader, SafetensorsFile, saveModel, writeSafetensors, type HostTensor, type Qwen3Model } from '@rlvr/policy';
import { TrainerError } from './errors.js';
import { configDiff, configHash } from './config-hash.js';

/** What every checkpoint directory records beside its tensors. */
export interface CheckpointMeta {
  step: number;
  configHash: string;
  config: unknown;
  /** free-form resumable state: RNG state, data cursor, ... */
  state: Record<string, unknown>;
}

const PREFIX = 'step-';
const META = 'checkpoint.json';
/** Every other file's SHA-256, in `sha256sum` format (`sha256sum -c SHA256SUMS` checks a checkpoint by hand). */
export const CHECKSUMS = 'SHA256SUMS';

/**
 * Checkpoint directories `step-000012/` under one root. A save writes into a
 * hidden temporary directory and renames it into place only once complete, so a
 * process killed mid-save never leaves a corrupt latest checkpoint; the last
 * `keepLast` are kept. Every file of a checkpoint, its meta included, is listed with its
 * SHA-256 in `SHA256SUMS` (written last) and checked by `load`: a flipped byte anywhere, in
 * the sums too, is a `checkpoint_corrupt` error naming the file.
 */
export class CheckpointStore {
  constructor(
    readonly root: string,
    readonly keepLast = 3,
  ) {}

  /**
   * Save checkpoint `step`: `write(dir)` fills a fresh temporary directory with the
   * tensors; `checkpoint.json` (the meta), then `SHA256SUMS`; then the rename.
   */
  async save(meta: Omit<CheckpointMeta, 'configHash'>, write: (dir: string) => Promise<void>): Promise<string> {
    await mkdir(this.root, { recursive: true });
    const final = join(this.root, `${PREFIX}${String(meta.step).padStart(6, '0')}`);
    const tmp = join(this.root, `.tmp-${PREFIX}${meta.step}-${process.pid}-${Date.now()}`);
    await mkdir(tmp);
    try {
      await write(tmp);
      const full: CheckpointMeta = { ...meta, configHash: configHash(meta.config) };
      await writeFile(join(tmp, META), JSON.stringify(full, null, 2) + '\n');
      const sums = await Promise.all((await filesUnder(tmp)).map(async (f) => `${await sha256(join(tmp, f))}  ${f}\n`));
      await writeFile(join(tmp, CHECKSUMS), sums.join(''));
      await rm(final, { recursive: true, force: true });
      await rename(tmp, final);
    } catch (e) {
      await rm(tmp, { recursive: true, force: true });
      throw e;
    }
    await this.prune();
    return final;
  }

  /** Inside `save`'s `write`: a trainer's tensors, its model as a model directory and its optimizer's moments. */
  async writeTensors(dir: string, model: Qwen3Model, moments: ReadonlyMap<string, HostTensor>): Promise<void> {
    await saveModel(model, join(dir, 'model'));
    writeSafetensors(join(dir, 'optimizer.safetensors'), new Map([...moments].map(([k, t]) => [k, { ...t, dtype: 'F32' as const }])));
  }

  /** Readers of what `writeTensors` wrote into checkpoint `dir`. */
  tensorReaders(dir: string): { model: CheckpointReader; optimizer: SafetensorsFile } {
    return { model: new CheckpointReader(join(dir, 'model')), optimizer: SafetensorsFile.open(join(dir, 'optimizer.safetensors')) };
  }

  /** Complete checkpoint directories, oldest first. */
  async list(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch {
      return [];
    }
    const steps = names.filter((n) => n.startsWith(PREFIX)).sort();
    const complete: string[] = [];
    for (const n of steps) {
      try {
        await stat(join(this.root, n, META));
        complete.push(join(this.root, n));
      } catch {
        // no meta: not a checkpoint this store finished; ignore it
      }
    }
    return complete;
  }

  /** Why `list()` finds no checkpoint, in words naming the directory: missing, empty, or what it holds instead. */
  async whyNone(): Promise<string> {
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch {
      return `${this.root} does not exist`;
    }
    if (names.length === 0) return `${this.root} is empty`;
    const shown = names.sort().slice(0, 3).join(', ') + (names.length > 3 ? `, ... (${names.length} entries)` : '');
    return `${this.root} holds no complete checkpoint: ${shown}`;
  }

  async latest(): Promise<string | null> {
    const all = await this.list();
    return all.length > 0 ? all[all.length - 1]! : null;
  }

  /**
   * The newest checkpoint that `load`s with `config`; a damaged one (`checkpoint_corrupt`) is
   * passed over after `onDamaged` names it, any other error is thrown. Null when there is none
   * at all; when every one is damaged, a `checkpoint_corrupt` error (starting over would discard the run).
   */
  async latestIntact(config: unknown, onDamaged: (dir: string, err: Error) => void): Promise<string | null> {
    const all = await this.list();
    for (const dir of [...all].reverse()) {
      try {
        await this.load(dir, config);
        return dir;
      } catch (err) {
        if ((err as { code?: string }).code !== 'checkpoint_corrupt') throw err;
        onDamaged(dir, err as Error);
      }
    }
    if (all.length > 0) throw new TrainerError('checkpoint_corrupt', `every checkpoint in ${this.root} is damaged`);
    return null;
  }

  /**
   * Check every file of checkpoint `dir` against its `SHA256SUMS`: a missing, unlisted or
   * changed file (or unreadable sums) is a `checkpoint_corrupt` error naming the file.
   */
  async verify(dir: string): Promise<void> {
    const sumsFile = join(dir, CHECKSUMS);
    let text: string;
    try {
      text = await readFile(sumsFile, 'utf8');
    } catch (e) {
      const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
      throw new TrainerError(
        'checkpoint_corrupt',
        missing ? 'no SHA256SUMS: the checkpoint cannot be verified' : 'unreadable SHA256SUMS',
        { file: sumsFile },
        { cause: e },
      );
    }
    const listed = new Map<string, string>();
    const lines = text.split('\n');
    if (lines.pop() !== '') throw new TrainerError('checkpoint_corrupt', 'SHA256SUMS does not end with a newline', { file: sumsFile });
    lines.forEach((line, i) => {
      const m = /^([0-9a-f]{64}) {2}(\S.*)$/.exec(line);
      if (m === null) throw new TrainerError('checkpoint_corrupt', `line ${i + 1} is not "SHA256  FILE"`, { file: sumsFile });
      listed.set(m[2]!, m[1]!);
    });
    const present = await filesUnder(dir);
    for (const f of present) {
      if (f === CHECKSUMS) continue;
      const want = listed.get(f);
      if (want === undefined) throw new TrainerError('checkpoint_corrupt', 'not listed in SHA256SUMS', { file: join(dir, f) });
      if ((await sha256(join(dir, f))) !== want)
        throw new TrainerError('checkpoint_corrupt', 'SHA-256 differs from SHA256SUMS: the file changed after it was saved', {
          file: join(dir, f),
        });
    }
    for (const f of listed.keys())
      if (!present.includes(f)) throw new TrainerError('checkpoint_corrupt', 'listed in SHA256SUMS but missing', { file: join(dir, f) });
  }

  /**
   * Verify checkpoint `dir` (`verify`), read its meta and check it was written with `config`;
   * a different config is refused with the differing fields named.
   */
  async load(dir: string, config: unknown): Promise<CheckpointMeta> {
    if (!existsSync(join(dir, META))) throw new TrainerError('checkpoint_missing', 'no checkpoint here', { file: join(dir, META) });
    await this.verify(dir);
    let meta: CheckpointMeta;
    try {
      meta = JSON.parse(await readFile(join(dir, META), 'utf8')) as CheckpointMeta;
    } catch (e) {
      const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
      throw new TrainerError(
        missing ? 'checkpoint_missing' : 'checkpoint_corrupt',
        missing ? 'no checkpoint here' : 'unreadable checkpoint meta',
        { file: join(dir, META) },
        { cause: e },
      );
    }
    if (meta.configHash !== configHash(config)) {
      const fields = configDiff(meta.config, config);
      // The directory leads the sentence (no `file:` prefix): `DIR was written with a different config`.
      throw new TrainerError(
        'checkpoint_config_mismatch',
        `${dir} was written with a different config; differing fields: ${fields.join(', ')}`,
      );
    }
    return meta;
  }

  async prune(): Promise<void> {
    const all = await this.list();
    for (const dir of all.slice(0, Math.max(all.length - this.keepLast, 0))) await rm(dir, { recursive: true, force: true });
    // temporary directories of saves that died
    for (const n of await readdir(this.root)) {
      if (n.startsWith(`.tmp-${PREFIX}`) && !n.includes(`-${process.pid}-`)) await rm(join(this.root, n), { recursive: true, force: true });
    }
  }
}

/** The files under `dir`, as sorted `/`-separated paths relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
}

async function sha256(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}
