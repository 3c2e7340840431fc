import { mkdir, readdir, readFile, rename, rm, writeFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
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

/**
 * Checkpoint directories `step-000012/` under one root. A save writes into a
 * hidden temporary directory and renames it into place only once complete, so a
 * process killed mid-save never leaves a corrupt latest checkpoint; the last
 * `keepLast` are kept.
 */
export class CheckpointStore {
  constructor(
    readonly root: string,
    readonly keepLast = 3,
  ) {}

  /**
   * Save checkpoint `step`: `write(dir)` fills a fresh temporary directory with the
   * tensors; `checkpoint.json` (the meta) is written last; then the rename.
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
      await rm(final, { recursive: true, force: true });
      await rename(tmp, final);
    } catch (e) {
      await rm(tmp, { recursive: true, force: true });
      throw e;
    }
    await this.prune();
    return final;
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

  async latest(): Promise<string | null> {
    const all = await this.list();
    return all.length > 0 ? all[all.length - 1]! : null;
  }

  /**
   * Read a checkpoint's meta and check it was written with `config`; a different
   * config is refused with the differing fields named.
   */
  async load(dir: string, config: unknown): Promise<CheckpointMeta> {
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
