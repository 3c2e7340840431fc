import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CLI, rlvr } from '../test-utils/run-cli.js';
import { readRunDir } from '@rlvr/report';

const MICRO = {
  steps: 3,
  batchSize: 4,
  vocabProblems: 50,
  model: { hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, head_dim: 8 },
  eval: { every: 2, problems: 4, maxNewTokens: 6 },
  logEvery: 1,
};

let root: string;
let cfg: string;
beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -b packages/reference-trainer)`);
  root = await mkdtemp(join(tmpdir(), 'rlvr-pretrain-'));
  cfg = join(root, 'micro.json');
  await writeFile(cfg, JSON.stringify(MICRO));
  await selectBackend({ backend: 'wasm' });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('rlvr pretrain', () => {
  test('writes a run directory and a loadable checkpoint; same seed, same weights', async () => {
    const out = join(root, 'a');
    // seed 0 on purpose: tfjs's randomNormal treats seed 0 as unseeded
    const r = await rlvr('pretrain', '--config', cfg, '--out', out, '--seed', '0');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('rlvr pretrain: step 3/3: loss ');
    expect(r.stderr).toMatch(/rlvr pretrain: eval step 2: accuracy \d+\.\d% \(\d\/4\)/);
    const summary = JSON.parse(r.stdout) as {
      parameters: number;
      vocabSize: number;
      steps: number;
      evals: { step: number }[];
      checkpointBytes: number;
    };
    expect(summary.steps).toBe(3);
    expect(summary.evals.map((e) => e.step)).toEqual([2, 3]);

    const run = await readRunDir(out);
    expect(run.metrics.map((m) => m.step)).toEqual([1, 2, 3]);
    expect(run.metrics.map((m) => typeof m.accuracy)).toEqual(['undefined', 'number', 'number']);
    for (const m of run.metrics) expect(m['loss/sft']).toBeGreaterThan(0);
    expect(run.config).toMatchObject({
      command: 'pretrain',
      seed: 0,
      steps: 3,
      derived: { vocab_size: summary.vocabSize, parameters: summary.parameters },
    });

    const ckpt = join(out, 'checkpoint');
    expect((await readdir(ckpt)).sort()).toEqual(['config.json', 'model.safetensors', 'tokenizer.pruned.json']);
    const model = loadModel(ckpt);
    expect(model.numParameters()).toBe(summary.parameters);
    expect(model.config.vocab_size).toBe(summary.vocabSize);
    const tok = loadTokenizer(ckpt);
    expect(tok.vocabSize).toBe(summary.vocabSize);
    expect(tok.decode(tok.encode('Tom has 3 apples.\n\\boxed{5}'))).toBe('Tom has 3 apples.\n\\boxed{5}');
    model.dispose();

    const again = await rlvr('pretrain', '--config', cfg, '--out', join(root, 'b'), '--seed', '0', '-q');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    const other = await rlvr('pretrain', '--config', cfg, '--out', join(root, 'c'), '--seed', '8', '-q');
    expect(other.code, other.stderr).toBe(0);
    const weights = (d: string) => readFile(join(root, d, 'checkpoint', 'model.safetensors'));
    expect((await weights('b')).equals(await weights('a'))).toBe(true);
    expect((await weights('c')).equals(await weights('a'))).toBe(false);
    // identical losses and accuracies; only the timing column differs
    const untimed = async (d: string) => (await readRunDir(join(root, d))).metrics.map(({ tokens_per_s: _t, ...m }) => m);
    expect(await untimed('b')).toEqual(await untimed('a'));
  });

  test('a bad config fails in one line naming the fields, and writes nothing', async () => {
    const bad = join(root, 'bad.json');
    await writeFile(bad, JSON.stringify({ ...MICRO, stepz: 3, batchSize: 0 }));
    const out = join(root, 'bad-run');
    const r = await rlvr('pretrain', '--config', bad, '--out', out);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      new RegExp(`^rlvr pretrain: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: invalid pretrain config: .*unknown key: stepz.*\\n$`),
    );
    expect(r.stderr).toContain('batchSize');
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(existsSync(out)).toBe(false);

    const flag = await rlvr('pretrain', '--steps', 'ten', '--out', out);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(
      /^rlvr pretrain: --steps: must be an integer >= 1 \(got "ten"\)\n\(rlvr pretrain --help lists the options\)\n$/,
    );
    const missing = await rlvr('pretrain', '--config', join(root, 'nope.json'), '--out', out);
    expect(missing).toMatchObject({ code: 1, stderr: `rlvr pretrain: ${join(root, 'nope.json')}: cannot read config: no such file\n` });
  });

  test('never overwrites a run directory', async () => {
    const out = join(root, 'taken');
    const first = await rlvr('pretrain', '--config', cfg, '--out', out, '--steps', '1', '-q');
    expect(first.code, first.stderr).toBe(0);
    const r = await rlvr('pretrain', '--config', cfg, '--out', out, '--steps', '1');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `rlvr pretrain: ${out}: ${join(out, 'metrics.jsonl')} exists: pick another --out (a run directory is never overwritten)\n`,
    );
    // the log gone, the trained policy is still a run's record
    const weights = await readFile(join(out, 'checkpoint', 'model.safetensors'));
    await rm(join(out, 'metrics.jsonl'));
    const again = await rlvr('pretrain', '--config', cfg, '--out', out, '--steps', '1');
    expect(again).toMatchObject({
      code: 1,
      stderr: `rlvr pretrain: ${out}: ${join(out, 'checkpoint')} exists: pick another --out (a run directory is never overwritten)\n`,
    });
    expect((await readFile(join(out, 'checkpoint', 'model.safetensors'))).equals(weights)).toBe(true);
  });
});
