/** `rlvr train` on the long-chain task family, picked by name in the config (issue 39). Through the built bin. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { longChainGenerator } from '@rlvr/tasks';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { rlvr } from '../test-utils/run-cli.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rlvr-long-chain-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

test('family long-chain trains on long-chain problems of the run seed and records the family; a bad option names its field', async () => {
  const cfg = join(root, 'micro.json');
  await writeFile(
    cfg,
    JSON.stringify({
      steps: 1,
      family: 'long-chain',
      longChain: { maxSteps: 5 },
      rollout: { prompts: 2, groupSize: 2, maxNewTokens: 8 },
      eval: { every: 0, problems: 2, n: 1, maxNewTokens: 8, greedy: false, weightProblems: 0 },
      sampleEvery: 1,
      samples: 2,
      backend: 'wasm',
      workers: 1,
    }),
  );
  const out = join(root, 'run');
  const r = await rlvr('train', '--config', cfg, '--out', out, '-q');
  expect(r.code, r.stderr).toBe(0);
  const config = JSON.parse(await readFile(join(out, 'config.json'), 'utf8')) as { family: string; longChain: { maxSteps: number } };
  expect(config.family).toBe('long-chain');
  expect(config.longChain.maxSteps).toBe(5);
  const prompts = (await readFile(join(out, 'samples.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { prompt: string }).prompt);
  // the first training problems are stream 0 of the family (none of them held out here)
  const first = longChainGenerator({ maxSteps: 5 })
    .tasks(0, 2)
    .map((t) => t.question);
  expect(new Set(prompts)).toEqual(new Set(first));

  const badCfg = join(root, 'bad.json');
  await writeFile(badCfg, JSON.stringify({ family: 'longchain' }));
  const bad = await rlvr('train', '--config', badCfg, '--out', join(root, 'bad'));
  expect(bad.code).toBe(1);
  expect(bad.stderr.split('\n')[0]).toBe(
    `rlvr train: ${badCfg}: invalid train config: family: must be one of "arith", "long-chain" (got "longchain")`,
  );
  const badOption = await rlvr('train', '--config', cfg, '--longChain.maxSteps', '99', '--out', join(root, 'bad'));
  expect(badOption.code).toBe(2);
  expect(badOption.stderr.split('\n')[0]).toBe('rlvr train: --longChain.maxSteps: Too big: expected number to be <=32 (got "99")');
}, 300_000);
