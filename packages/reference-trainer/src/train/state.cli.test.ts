import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readRunDir } from '@rlvr/report';
import { CLI, rlvr } from '../test-utils/run-cli.js';
import { writeStatefulPlugin } from '../test-utils/stateful-plugin.js';

/** 3 tiny steps of the embedded default (2 prompts x 4 completions), checkpoints every step, one held-out problem. */
const TINY = {
  steps: 3,
  rollout: { prompts: 2, groupSize: 4, maxNewTokens: 16 },
  eval: { every: 2, problems: 1, n: 1, maxNewTokens: 8, greedy: false }, // evaluations at 2 (the partial run's last) and 3
  checkpointEvery: 1,
  sampleEvery: 1,
  samples: 4,
  backend: 'wasm',
  estimator: 'running-baseline',
};

let root: string;
let cfg: string;
let plugin: string;
beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -b packages/reference-trainer)`);
  root = await mkdtemp(join(tmpdir(), 'rlvr-state-'));
  cfg = join(root, 'tiny.json');
  await writeFile(cfg, JSON.stringify(TINY));
  plugin = await writeStatefulPlugin(root);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const untimed = async (dir: string) =>
  (await readRunDir(dir)).metrics.map((m) =>
    Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/') && k !== 'tokens_per_s')),
  );

describe("a stateful estimator's state", () => {
  test('is checkpointed: 2 steps + --resume to 3 give the 3-step run bit for bit (metrics, samples, weights)', {
    timeout: 600_000,
  }, async () => {
    const full = join(root, 'full');
    const a = await rlvr('train', '--config', cfg, '--plugin', plugin, '--out', full, '-q');
    expect(a.code, a.stderr).toBe(0);
    const part = join(root, 'part');
    const b = await rlvr('train', '--config', cfg, '--plugin', plugin, '--out', part, '--steps', '2', '-q');
    expect(b.code, b.stderr).toBe(0);
    const meta = JSON.parse(await readFile(join(part, 'checkpoints', 'step-000002', 'checkpoint.json'), 'utf8')) as {
      state: { estimatorState: unknown };
    };
    // 2 steps of 8 rollouts: the count and the float64 sum, bit for bit as base64
    expect(meta.state.estimatorState).toMatchObject({ n: 16, sum: { $typed: 'Float64Array' } });
    const c = await rlvr('train', '--plugin', plugin, '--out', part, '--resume', '--steps', '3', '-q');
    expect(c.code, c.stderr).toBe(0);
    const [want, got] = [await untimed(full), await untimed(part)];
    expect(got).toEqual(want);
    // the state reached step 3: its running mean covers 24 rollouts
    const rewards = (await readRunDir(full)).metrics.slice(1).map((m) => m['reward/mean']!);
    expect(want[3]!['adv/running_mean']).toBeCloseTo((rewards[0]! + rewards[1]! + rewards[2]!) / 3, 6);
    expect(await readFile(join(part, 'samples.jsonl'), 'utf8')).toBe(await readFile(join(full, 'samples.jsonl'), 'utf8'));
    const weights = (d: string) => readFile(join(d, 'model', 'model.safetensors'));
    expect((await weights(part)).equals(await weights(full))).toBe(true);
  });
});
