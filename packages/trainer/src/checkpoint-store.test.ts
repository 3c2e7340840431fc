import { describe, expect, it } from 'vitest';
import { mkdtemp, readdir, writeFile, mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore } from './checkpoint-store.js';
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
});

describe('configHash / configDiff', () => {
  it('ignores key order and finds differing leaves', () => {
    expect(configHash({ a: 1, b: { c: [1, 2] } })).toBe(configHash({ b: { c: [1, 2] }, a: 1 }));
    expect(configHash({ a: 1 })).not.toBe(configHash({ a: 2 }));
    expect(configDiff({ a: 1, b: { c: 2, d: 3 } }, { a: 1, b: { c: 2, d: 4 }, e: 5 })).toEqual(['b.d', 'e']);
  });
});
