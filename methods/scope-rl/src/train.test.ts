import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Scaffold } from '@rlvr/tasks';
import { afterAll, describe, expect, it } from 'vitest';
import { scaffoldedQuestion } from './index.js';

// The plugin is this package's build (nx builds it before its tests): what a user passes to --plugin.
const PLUGIN = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const DATA = fileURLToPath(new URL('../test/fixtures/scaffolded.jsonl', import.meta.url));
const manifest = createRequire(import.meta.url).resolve('@rlvr/reference-trainer/package.json');
const RLVR = join(dirname(manifest), 'dist', 'cli.js');
const out = mkdtempSync(join(tmpdir(), 'rlvr-scope-rl-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Tiny steps of the embedded warm-up model on the scaffolded data file (its `scaffold` field reaches the method as aux data). */
const config = (tau: number) => ({
  estimator: 'scope-rl',
  estimatorConfig: { tau },
  data: { train: DATA, format: { question: 'question', answer: 'answer', solution: 'solution', scaffold: 'scaffold' } },
  rollout: { prompts: 2, groupSize: 4, maxNewTokens: 16 },
  eval: { every: 2, problems: 2, n: 1, maxNewTokens: 8, greedy: false },
  checkpointEvery: 1,
  sampleEvery: 1,
  samples: 4,
  backend: 'wasm',
  workers: 1,
});
/** `rlvr ...args` in a child process, awaited (a blocking spawn would stall the test worker for a minute). */
const rlvr = (...args: string[]) =>
  new Promise<{ status: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [RLVR, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stderr }));
  });
const metricsOf = (dir: string) =>
  readFileSync(join(out, dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number | null>);
const untimed = (dir: string) =>
  metricsOf(dir).map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/') && k !== 'tokens_per_s')));

describe('rlvr train --plugin', () => {
  it('trains scope-rl on a data file with scaffolds: routing metrics every step, on the main thread and on 2 workers with stage 2', async () => {
    expect(existsSync(PLUGIN), 'build first (npx tsc -b methods/scope-rl)').toBe(true);
    const cfg = join(out, 'tau.json');
    writeFileSync(cfg, JSON.stringify(config(0.5)));
    const r = await rlvr('train', '--config', cfg, '--plugin', PLUGIN, '--steps', '2', '--out', join(out, 'run'), '-q');
    expect(r.status, r.stderr).toBe(0);
    const metrics = metricsOf('run');
    expect(metrics.map((m) => m.step)).toEqual([0, 1, 2]);
    // samples.jsonl: a routed rollout shows the scaffolded question its tokens answer, flagged; the others their own question
    const rows = readFileSync(DATA, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { question: string; scaffold?: Scaffold });
    const samples = readFileSync(join(out, 'run', 'samples.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { prompt: string; routed: boolean });
    const scaffolded = rows.flatMap((x) => (x.scaffold === undefined ? [] : [scaffoldedQuestion(x.question, x.scaffold)]));
    for (const x of samples) expect(x.routed ? scaffolded : rows.map((y) => y.question)).toContain(x.prompt);
    if (metrics.slice(1).every((m) => m['routing/fraction'] === 1)) expect(samples.every((x) => x.routed)).toBe(true);
    for (const m of metrics.slice(1)) {
      expect(m['routing/fraction']).toBeGreaterThanOrEqual(0);
      expect(m['routing/fraction']).toBeLessThanOrEqual(1);
      expect(m['routing/reward_mean_before']).toBeGreaterThanOrEqual(0);
      // a routed group had a mean reward below tau before routing
      if (m['routing/fraction']! > 0) expect(m['routing/reward_before']).toBeLessThan(0.5);
      else expect(m['routing/reward_before']).toBeNull();
    }
    // the same on 2 policy workers (they sample the scaffolded prompts too), with stage 2 on
    const w = await rlvr(
      'train',
      '--config',
      cfg,
      '--plugin',
      PLUGIN,
      '--steps',
      '1',
      '--workers',
      '2',
      '--estimatorConfig.qpr',
      'true',
      '--out',
      join(out, 'w2'),
      '-q',
    );
    expect(w.status, w.stderr).toBe(0);
    const [, m1] = metricsOf('w2');
    expect(m1!['routing/fraction']).toBeGreaterThanOrEqual(0);
    expect(m1!['routing/reward_mean_regraded']).toBeGreaterThanOrEqual(-1);
    expect(m1!['time/weight_sync_s']).toBeDefined();
    expect(JSON.parse(readFileSync(join(out, 'run', 'config.json'), 'utf8'))).toMatchObject({
      estimator: 'scope-rl',
      estimatorConfig: { tau: 0.5, beta: 0.5 },
    });
  });

  it('a resumed run routes and re-samples as an uninterrupted one: 2 steps + --resume to 3 equal 3 steps bit for bit', async () => {
    // tau 1: every group not solved by all its rollouts is routed, so re-sampling runs on every step
    const cfg = join(out, 'all.json');
    writeFileSync(cfg, JSON.stringify(config(1)));
    const a = await rlvr('train', '--config', cfg, '--plugin', PLUGIN, '--steps', '3', '--out', join(out, 'full'), '-q');
    expect(a.status, a.stderr).toBe(0);
    const b = await rlvr('train', '--config', cfg, '--plugin', PLUGIN, '--steps', '2', '--out', join(out, 'part'), '-q');
    expect(b.status, b.stderr).toBe(0);
    const c = await rlvr('train', '--plugin', PLUGIN, '--out', join(out, 'part'), '--resume', '--steps', '3', '-q');
    expect(c.status, c.stderr).toBe(0);
    const want = untimed('full');
    expect(want.slice(1).some((m) => (m['routing/fraction'] as number) > 0)).toBe(true);
    expect(untimed('part')).toEqual(want);
    expect(readFileSync(join(out, 'part', 'samples.jsonl'), 'utf8')).toBe(readFileSync(join(out, 'full', 'samples.jsonl'), 'utf8'));
    const weights = (d: string) => readFileSync(join(out, d, 'model', 'model.safetensors'));
    expect(weights('part').equals(weights('full'))).toBe(true);
  });

  it("trains scope-rl on the long-chain task, with scaffolds made from each problem's chain", async () => {
    const cfg = join(out, 'long.json');
    const { data: _data, ...rest } = config(1);
    writeFileSync(
      cfg,
      JSON.stringify({
        ...rest,
        family: 'long-chain',
        longChain: { minSteps: 2, maxSteps: 2 },
        rollout: { prompts: 2, groupSize: 2, maxNewTokens: 8 },
      }),
    );
    const r = await rlvr('train', '--config', cfg, '--plugin', PLUGIN, '--steps', '2', '--out', join(out, 'long'), '-q');
    expect(r.status, r.stderr).toBe(0);
    const metrics = metricsOf('long').slice(1);
    expect(metrics).toHaveLength(2);
    // the warm-up model does not solve them: every group routed to the scaffold made from its chain
    for (const m of metrics) expect(m['routing/fraction']).toBe(1);
  });
});
