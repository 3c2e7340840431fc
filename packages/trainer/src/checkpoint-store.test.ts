import { describe, expect, it } from 'vitest';
import { mkdtemp, readdir, writeFile, mkdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHECKSUMS, CheckpointStore } from './checkpoint-store.js';
import { configDiff, configHash } from './config-hash.js';
import { TrainerError } from './errors.js';

const config = { lr: 1e-6, estimator: 'grail', optimizer: { beta1: 0.9 } };

describe('CheckpointStore', () => {
  it('saves atomically, keeps the last K, and loads the latest', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rlvr-ckpt-'));
    const store = new CheckpointStore(root, 2);
    for (const step of [1, 2, 3]) {
      await store.save({ step, config, state: { cursor: step * 10 } }, async (dir) => writeFile(join(dir, 'model.bin'), `w${step}`));
    }
    expect((await readdir(root)).sort()).toEqual(['step-000002', 'step-000003']);
    const latest = await store.latest();
    expect(latest).toBe(join(root, 'step-000003'));
    const meta = await store.load(latest!, { ...config });
    expect(meta.state).toEqual({ cursor: 30 });
    expect(await readFile(join(latest!, 'model.bin'), 'utf8')).toBe('w3');
  });

  it('a save that dies leaves the previous checkpoint as the latest and no stray directory', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rlvr-ckpt-'));
    const store = new CheckpointStore(root, 3);
    await store.save({ step: 1, config, state: {} }, async () => {});
    await expect(
      store.save({ step: 2, config, state: {} }, async (dir) => {
        await writeFile(join(dir, 'half.bin'), 'partial');
        throw new Error('disk full');
      }),
    ).rejects.toThrow('disk full');
    expect(await store.latest()).toBe(join(root, 'step-000001'));
    expect(await readdir(root)).toEqual(['step-000001']);
    // a directory without meta (a killed process's rename never happened) is not a checkpoint
    await mkdir(join(root, 'step-000009'));
    expect(await store.latest()).toBe(join(root, 'step-000001'));
  });

  it('whyNone says why there is no checkpoint: no directory, an empty one, or what it holds instead', async () => {
    const root = join(await mkdtemp(join(tmpdir(), 'rlvr-ckpt-')), 'checkpoints');
    const store = new CheckpointStore(root);
    expect(await store.whyNone()).toBe(`${root} does not exist`);
    await mkdir(root);
    expect(await store.whyNone()).toBe(`${root} is empty`);
    for (const n of ['step-000004', 'notes.txt', 'a', 'b']) await mkdir(join(root, n));
    expect(await store.list()).toEqual([]);
    expect(await store.whyNone()).toBe(`${root} holds no complete checkpoint: a, b, notes.txt, ... (4 entries)`);
  });

  it('refuses a checkpoint from a different config, naming the fields', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rlvr-ckpt-'));
    const store = new CheckpointStore(root);
    const dir = await store.save({ step: 1, config, state: {} }, async () => {});
    const other = { lr: 2e-6, estimator: 'grail', optimizer: { beta1: 0.8 } };
    await expect(store.load(dir, other)).rejects.toThrow(/differing fields: lr, optimizer\.beta1$/);
    await expect(store.load(join(root, 'nope'), config)).rejects.toSatisfy(
      (e: unknown) => e instanceof TrainerError && e.code === 'checkpoint_missing',
    );
  });
  it('latestIntact passes over damaged checkpoints, naming each, and refuses when every one is damaged', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rlvr-ckpt-'));
    const store = new CheckpointStore(root, 3);
    const damaged: string[] = [];
    const note = (dir: string, err: Error) => damaged.push(`${dir}: ${err.message}`);
    expect(await store.latestIntact(config, note)).toBeNull();
    for (const step of [1, 2, 3]) await store.save({ step, config, state: {} }, async (dir) => writeFile(join(dir, 'w.bin'), `w${step}`));
    await writeFile(join(root, 'step-000003', 'w.bin'), 'w9');
    expect(await store.latestIntact(config, note)).toBe(join(root, 'step-000002'));
    expect(damaged).toEqual([
      `${join(root, 'step-000003')}: ${join(root, 'step-000003', 'w.bin')}: SHA-256 differs from SHA256SUMS: the file changed after it was saved`,
    ]);
    // another config is not damage: it is thrown, not passed over
    await expect(store.latestIntact({ ...config, lr: 1 }, note)).rejects.toSatisfy(
      (e: unknown) => e instanceof TrainerError && e.code === 'checkpoint_config_mismatch',
    );
    for (const step of [1, 2]) await writeFile(join(root, `step-00000${step}`, 'w.bin'), 'w9');
    await expect(store.latestIntact(config, note)).rejects.toThrow(`every checkpoint in ${root} is damaged`);
    expect(damaged).toHaveLength(1 + 1 + 3); // step 3 again before the mismatch, then all three
  });
});

describe('CheckpointStore checksums', () => {
  async function saved(): Promise<{ store: CheckpointStore; dir: string }> {
    const root = await mkdtemp(join(tmpdir(), 'rlvr-ckpt-'));
    const store = new CheckpointStore(root);
    const dir = await store.save({ step: 1, config, state: { cursor: 7 } }, async (d) => {
      await writeFile(join(d, 'weights.bin'), Buffer.from([0, 1, 2, 3, 250, 251, 252, 253]));
      await mkdir(join(d, 'model'));
      await writeFile(join(d, 'model', 'config.json'), '{"hidden_size":8}\n');
    });
    return { store, dir };
  }

  it('lists every file with its SHA-256 in sha256sum format', async () => {
    const { dir } = await saved();
    const { createHash } = await import('node:crypto');
    const lines = (await readFile(join(dir, CHECKSUMS), 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => l.slice(66))).toEqual(['checkpoint.json', 'model/config.json', 'weights.bin']);
    for (const l of lines)
      expect(l.slice(0, 64)).toBe(
        createHash('sha256')
          .update(await readFile(join(dir, l.slice(66))))
          .digest('hex'),
      );
  });

  it('every flipped bit of every file, the sums included, is refused by load, naming the file', async () => {
    const { store, dir } = await saved();
    const files = ['weights.bin', 'model/config.json', 'checkpoint.json', CHECKSUMS];
    let flips = 0;
    for (const f of files) {
      const path = join(dir, f);
      const good = await readFile(path);
      for (let i = 0; i < good.length; i++) {
        const bad = Buffer.from(good);
        bad[i] = bad[i]! ^ (1 << (i % 8));
        await writeFile(path, bad);
        const err = await store.load(dir, config).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, `${f} byte ${i}`).toBeInstanceOf(TrainerError);
        expect((err as TrainerError).code, `${f} byte ${i}`).toBe('checkpoint_corrupt');
        // a flip in a file's own bytes names that file; one in the sums may name the file whose line it broke
        if (f !== CHECKSUMS) expect((err as TrainerError).location.file).toBe(path);
        flips++;
      }
      await writeFile(path, good);
    }
    expect(flips).toBeGreaterThan(300);
    expect((await store.load(dir, config)).state).toEqual({ cursor: 7 });
  });

  it('a missing, an added or an unlisted file, and missing sums, are refused', async () => {
    const { store, dir } = await saved();
    const refused = async (file: string, message: RegExp) => {
      const err = (await store.load(dir, config).catch((e: unknown) => e)) as TrainerError;
      expect(err.code).toBe('checkpoint_corrupt');
      expect(err.location.file).toBe(join(dir, file));
      expect(err.message).toMatch(message);
    };
    await writeFile(join(dir, 'extra.bin'), 'x');
    await refused('extra.bin', /not listed in SHA256SUMS/);
    await rm(join(dir, 'extra.bin'));
    const weights = await readFile(join(dir, 'weights.bin'));
    await rm(join(dir, 'weights.bin'));
    await refused('weights.bin', /listed in SHA256SUMS but missing/);
    await writeFile(join(dir, 'weights.bin'), weights.subarray(0, 4));
    await refused('weights.bin', /SHA-256 differs/);
    await writeFile(join(dir, 'weights.bin'), weights);
    await rm(join(dir, CHECKSUMS));
    await refused(CHECKSUMS, /no SHA256SUMS/);
  });
});

describe('configHash / configDiff', () => {
  it('ignores key order and finds differing leaves', () => {
    expect(configHash({ a: 1, b: { c: [1, 2] } })).toBe(configHash({ b: { c: [1, 2] }, a: 1 }));
    expect(configHash({ a: 1 })).not.toBe(configHash({ a: 2 }));
    expect(configDiff({ a: 1, b: { c: 2, d: 3 } }, { a: 1, b: { c: 2, d: 4 }, e: 5 })).toEqual(['b.d', 'e']);
  });
});
