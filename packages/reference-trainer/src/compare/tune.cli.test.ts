import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readRunDir } from '@rlvr/report';
import { fileProblems, splitHeldOut, splitValidation } from '@rlvr/rollout';
import type { TuneRecord } from '@rlvr/report';
import { CLI, rlvr } from '../test-utils/run-cli.js';
import { writeHalvedPlugin } from '../test-utils/halved-plugin.js';

/** compare.cli.test.ts's micro setting: 2 steps of 2 prompts x 4 completions, 4 held-out problems x 2 samples. */
const MICRO = {
  steps: 2,
  rollout: { prompts: 2, groupSize: 4, maxNewTokens: 24 },
  eval: { every: 0, problems: 4, n: 2, maxNewTokens: 24, greedy: false },
  checkpointEvery: 1,
  sampleEvery: 1,
  samples: 2,
  backend: 'wasm',
  workers: 1,
};

interface CompareJson {
  tune: TuneRecord;
  runs: { estimator: string; seed: number; dir: string; evals: { step: number; accuracy: number; problems: number }[] }[];
}

let root: string;
let cfg: string;
let plugin: string;
/** A row from a plugin beside a built-in one: the protocol is the same for any registered estimator. */
const args = () => [
  'compare',
  '--config',
  cfg,
  '--plugin',
  plugin,
  '--estimators',
  'grpo,grpo+halved',
  '--seeds',
  '1',
  '--tune',
  'lr=1e-5,1e-4',
  '--tune-seeds',
  '2',
  '--tune-max-widen',
  '1',
  '--tune-problems',
  '6',
];
beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -b packages/reference-trainer)`);
  root = await mkdtemp(join(tmpdir(), 'rlvr-tune-'));
  cfg = join(root, 'micro.json');
  await writeFile(cfg, JSON.stringify(MICRO));
  plugin = await writeHalvedPlugin(root);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const readCompare = async (out: string) => JSON.parse(await readFile(join(out, 'compare.json'), 'utf8')) as CompareJson;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** Every tuning run's evaluations, by `ROW/lr-X/seed-S`. */
async function tuningEvals(out: string): Promise<Record<string, { step: number; accuracy: number }[]>> {
  const found: Record<string, { step: number; accuracy: number }[]> = {};
  for (const row of await readdir(join(out, 'tune')))
    for (const lr of await readdir(join(out, 'tune', row)))
      for (const seed of await readdir(join(out, 'tune', row, lr))) {
        const run = await readRunDir(join(out, 'tune', row, lr, seed));
        found[`${row}/${lr}/${seed}`] = run.evals!.map((e) => ({ step: e.step, accuracy: e.accuracy }));
      }
  return found;
}

describe('rlvr compare --tune', () => {
  const full = () => join(root, 'full');

  test('tuning runs on the tuning seeds and the validation split, each row at its chosen rate after; compare.json and the table say so', async () => {
    const r = await rlvr(...args(), '--out', full());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `rlvr compare: tune first: 2 x 2 rate(s) x 2 tuning seed(s) (seeds 1000, 1001) = 8 runs on 6 validation problems, more where a grid widens (at most 1 rate(s) a row) -> ${join(full(), 'tune')}\n`,
    );
    const c = await readCompare(full());
    const t = c.tune;
    expect(t).toMatchObject({ key: 'lr', field: 'trainer.schedule.lr', grid: [1e-5, 1e-4], seeds: [1000, 1001], maxWiden: 1 });
    expect(t.validation.problems).toBe(6);
    expect(t.validation.definition).toContain('validation/EVAL_SEED');
    expect(t.rows.map((x) => x.estimator)).toEqual(['grpo', 'grpo+halved']);
    for (const row of t.rows) {
      // a 2-rate grid always has its choice at an edge: it widens once (the cap), by the grid's ratio of 10
      expect(row.widened).toHaveLength(1);
      expect([1e-6, 1e-3]).toContain(row.widened[0]);
      expect(row.grid).toEqual([...row.grid].sort((a, b) => a - b));
      for (const p of row.points) {
        expect(p.seeds).toEqual([1000, 1001]);
        // each seed's accuracy is the final evaluation of its own run directory, on the 6 validation problems
        for (const [i, seed] of p.seeds.entries()) {
          const dir = join(full(), 'tune', row.estimator, `lr-${p.lr.toExponential()}`, `seed-${seed}`);
          const run = await readRunDir(dir);
          expect(run.config).toMatchObject({ seed, validation: { problems: 6 }, trainer: { schedule: { lr: p.lr } }, steps: 2 });
          expect(run.evals!.map((e) => [e.step, e.problems])).toEqual([
            [0, 6],
            [2, 6],
          ]);
          expect(p.accuracy[i]).toBe(run.evals!.at(-1)!.accuracy);
        }
        expect(p.mean).toBeCloseTo(mean(p.accuracy), 12);
      }
      // the choice: the best mean, the lower rate on a tie
      const best = Math.max(...row.points.map((p) => p.mean));
      expect(row.chosen).toBe(row.points.find((p) => p.mean === best)!.lr);
      const at = row.grid.indexOf(row.chosen);
      expect(row.edge).toBe(at === 0 ? 'low' : at === row.grid.length - 1 ? 'high' : null);
    }
    // the comparison: fresh seeds and the held-out set, each row at its chosen rate
    for (const run of c.runs) {
      const data = await readRunDir(join(full(), run.dir));
      const chosen = t.rows.find((x) => x.estimator === run.estimator)!.chosen;
      expect(data.config).toMatchObject({ seed: 0, trainer: { schedule: { lr: chosen } } });
      expect((data.config as Record<string, unknown>).validation).toBeUndefined();
      expect(run.evals.map((e) => e.problems)).toEqual([4, 4]);
    }
    expect(r.stderr).toMatch(/grpo lr 1e-5 seed 1000: eval step 2: accuracy [\d.]+% .* on 6 validation problems/);
    expect(r.stdout).toContain(
      'learning rates (trainer.schedule.lr) tuned on 2 tuning seed(s) (1000, 1001) on a validation split of 6 problems',
    );
    // three rates: the grid and the one rate added beyond the edge each row's choice was at
    expect(r.stdout).toMatch(/\nestimator( +lr 1e-\d){3} +chosen\n/);
    expect(r.stdout).toMatch(/\ngrpo\+halved( +(-|[\d.]+%( ± [\d.]+)?\*?)){3} +1e-\d( \((low|high) edge\))?\n/);
    for (const row of t.rows.filter((x) => x.edge !== null))
      expect(r.stdout).toContain(
        `${row.estimator}: chosen lr ${row.chosen.toExponential()} is at the ${row.edge} edge of its grid after 1 widening(s) (--tune-max-widen 1)`,
      );
    expect(r.stdout).toMatch(/\nrlvr compare: 2 estimators x 1 seed \(0\), 2 steps each/);
    // rlvr report of the comparison directory: the tuning curves and a table per row
    const rep = await rlvr('report', full(), '-q');
    expect(rep.code, rep.stderr).toBe(0);
    const html = await readFile(join(full(), 'report.html'), 'utf8');
    expect(html).toContain('data-chart="tune"');
    for (const row of t.rows) expect(html).toContain(`data-tune="${row.estimator}"`);
  }, 600_000);

  test('a comparison stopped mid-tuning resumes with --resume to the same choice and the same files as an uninterrupted one', async () => {
    const dir = join(root, 'stopped');
    const child = spawn(process.execPath, [CLI, ...args(), '--out', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stderr = '';
    const code = await new Promise<number | null>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        // the progress line after a tuning run's step-0 evaluation is written as its first step begins (a pipe
        // is written synchronously, and nothing between them waits): the signal lands in that step
        if (/grpo\+halved lr 1e-4 s1000 \[\.+\] +0\/2/.test(stderr) && !child.killed) child.kill('SIGTERM');
      });
      child.on('close', resolve);
    });
    expect(code, stderr).toBe(130);
    // a partial tuning run: one step and its checkpoint
    expect(stderr).toContain('grpo+halved lr 1e-4 seed 1000: stopped after step 1; checkpoint saved');
    expect(stderr).toContain(
      `rlvr compare: stopped while tuning the learning rates; nothing summarized: rlvr compare --out ${dir} --resume (same options) continues\n`,
    );
    const partial = join(dir, 'tune', 'grpo+halved', 'lr-1e-4', 'seed-1000');
    expect((await readRunDir(partial)).metrics.map((m) => m.step)).toEqual([0, 1]);
    expect(existsSync(join(dir, 'compare.json'))).toBe(false);
    expect(existsSync(join(dir, 'grpo'))).toBe(false);

    const rest = await rlvr(...args(), '--out', dir, '--resume', '-q');
    expect(rest.code, rest.stderr).toBe(0);
    // continued from its checkpoint, not started over
    expect((await readRunDir(partial)).metrics.map((m) => m.step)).toEqual([0, 1, 2]);
    const [a, b] = [await readCompare(full()), await readCompare(dir)];
    expect(b.tune).toEqual(a.tune);
    expect(b.runs.map((x) => [x.estimator, x.seed, x.evals])).toEqual(a.runs.map((x) => [x.estimator, x.seed, x.evals]));
    expect(await tuningEvals(dir)).toEqual(await tuningEvals(full()));
    // the same command again reads everything back: the choice does not move
    const again = await rlvr(...args(), '--out', dir, '--resume', '--json', '-q');
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as CompareJson).tune).toEqual(a.tune);
  }, 600_000);

  test('a variant is tuned as any row: its own trainer options kept, the rate set by the grid, then by its choice', async () => {
    const dir = join(root, 'variant');
    const r = await rlvr(
      'compare',
      '--config',
      cfg,
      '--estimators',
      'grpo,g',
      '--variants.g.estimator',
      'grpo',
      '--variants.g.trainer.epochs',
      '2',
      '--seeds',
      '1',
      '--steps',
      '1',
      '--tune',
      'lr=1e-5,1e-4',
      '--tune-seeds',
      '1',
      '--tune-max-widen',
      '0',
      '--out',
      dir,
      '-q',
    );
    expect(r.code, r.stderr).toBe(0);
    const t = (await readCompare(dir)).tune;
    expect(t.rows.map((x) => [x.estimator, x.grid, x.widened])).toEqual([
      ['grpo', [1e-5, 1e-4], []],
      ['g', [1e-5, 1e-4], []],
    ]);
    for (const lr of ['1e-5', '1e-4'])
      expect((await readRunDir(join(dir, 'tune', 'g', `lr-${lr}`, 'seed-1000'))).config).toMatchObject({
        estimator: 'grpo',
        trainer: { epochs: 2, schedule: { lr: Number(lr) } },
      });
    expect((await readRunDir(join(dir, 'g', 'seed-0'))).config).toMatchObject({
      trainer: { epochs: 2, schedule: { lr: t.rows[1]!.chosen } },
    });
    // with no widening allowed, a 2-rate grid's choice is at an edge: said, never silent
    expect(r.stdout).toMatch(/\ng: chosen lr 1e-\d is at the (low|high) edge of its grid after 0 widening\(s\) \(--tune-max-widen 0\)/);
  }, 300_000);

  test('a data file: the validation split is a seeded draw of its training rows; the run evaluates on it and trains on the rest only', async () => {
    const rows = Array.from({ length: 14 }, (_, i) => ({
      q: `Ann has ${i + 2} pens and buys ${i + 1} more. How many pens does Ann have?`,
      a: `${2 * i + 3}`,
    }));
    const file = join(root, 'rows.jsonl');
    await writeFile(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const config = join(root, 'rows.json');
    const format = { question: 'q', answer: 'a' };
    await writeFile(
      config,
      JSON.stringify({
        ...MICRO,
        steps: 4,
        data: { train: file, format },
        rollout: { ...MICRO.rollout, prompts: 2, groupSize: 2 },
        eval: { ...MICRO.eval, problems: 4, seed: 5 },
        validation: { problems: 4 },
        samples: 4,
      }),
    );
    const dir = join(root, 'rows-run');
    const r = await rlvr('train', '--config', config, '--out', dir, '-q');
    expect(r.code, r.stderr).toBe(0);
    // independently: 4 rows held out (seed 5), then 4 of the other 10 for validation, 6 left to train on
    const all = await fileProblems(file, format);
    const held = splitHeldOut(all, 4, 5);
    const v = splitValidation(held.train, 4, 5);
    expect(v.train).toHaveLength(6);
    const run = await readRunDir(dir);
    expect(run.evals!.map((e) => e.problems)).toEqual([4, 4]);
    const trained = new Set(run.samples!.map((x) => v.train.find((p) => x.prompt.includes(p.question))?.question));
    expect(trained.has(undefined)).toBe(false);
    expect(trained.size).toBeGreaterThan(1);
    for (const p of [...v.validation, ...held.heldOut]) expect(run.samples!.some((x) => x.prompt.includes(p.question))).toBe(false);
  }, 300_000);

  test.each<[string[], RegExp]>([
    [['--tune', 'lr=1e-4'], /^rlvr compare: --tune: needs at least two rates: a grid of one has nothing to choose \(got "lr=1e-4"\)\n/],
    [['--tune', 'lr=0,1e-4'], /^rlvr compare: --tune: a rate must be a positive number, not "0" \(got "lr=0,1e-4"\)\n/],
    [['--tune', 'lr=1e-4,1e-5,1e-4'], /^rlvr compare: --tune: lists the rate 0\.0001 twice/],
    [['--tune', 'beta=0.1,0.2'], /^rlvr compare: --tune: only lr \(trainer\.schedule\.lr\) is tunable for now, not "beta"/],
    [
      ['--tune', 'lr=1e-5,1e-4', '--seeds', '0,1,7', '--tune-seeds', '5,7'],
      /^rlvr compare: --tune-seeds: tuning seed 7 is also comparison seed: tuning and comparison seeds must differ\n/,
    ],
    [['--tune-seeds', '2'], /^rlvr compare: --tune-seeds: needs --tune lr=GRID\n/],
    [
      ['--tune', 'lr=1e-5,1e-4', '--tune-max-widen', '21'],
      /^rlvr compare: --tune-max-widen: must be an integer from 0 to 20 \(got "21"\)\n/,
    ],
  ])('%s: one line, before any training, nothing written', async (flags, message) => {
    const never = join(root, 'never');
    const r = await rlvr('compare', '--config', cfg, '--estimators', 'grpo,grail', ...flags, '--out', never);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
    expect(existsSync(never)).toBe(false);
  });
});
