import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readRunDir } from '@rlvr/report';
import { CLI, rlvr } from '../test-utils/run-cli.js';
import { writeHalvedPlugin } from '../test-utils/halved-plugin.js';

/** A micro comparison: the shipped warm-up checkpoint, 2 steps of 2 prompts x 4 completions, 4 held-out problems x 2 samples before and after. */
const MICRO = {
  steps: 2,
  rollout: { prompts: 2, groupSize: 4, maxNewTokens: 24 },
  eval: { every: 2, problems: 4, n: 2, maxNewTokens: 24, greedy: false },
  checkpointEvery: 1,
  sampleEvery: 1,
  samples: 2,
  backend: 'wasm',
};

interface Eval {
  step: number;
  accuracy: number;
  passAtN: number;
  n: number;
  problems: number;
}
interface Stat {
  mean: number;
  std: number | null;
  n: number;
}
interface CompareJson {
  command: string;
  estimators: string[];
  seeds: number[];
  steps: number;
  baseline: string;
  threshold: { kind: string; value: number };
  n: number;
  problems: number;
  finalStep: number;
  rows: {
    estimator: string;
    seeds: number[];
    accuracy: Stat;
    passAtN: Stat;
    start: Stat;
    thresholdSteps: (number | null)[];
    reached: number;
    secondsPerStep: number;
    stepTimeRatio: number;
  }[];
  contrasts: {
    a: string;
    b: string;
    role: string;
    test: string;
    seeds: number[];
    diff: number;
    p: number | null;
    detected: boolean | null;
  }[];
  runs: {
    estimator: string;
    seed: number;
    dir: string;
    evals: (Eval & { correct: number[] })[];
    secondsPerStep: number;
    cpuSeconds: number;
  }[];
}

let root: string;
let cfg: string;
beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -b packages/reference-trainer)`);
  root = await mkdtemp(join(tmpdir(), 'rlvr-compare-'));
  cfg = join(root, 'micro.json');
  await writeFile(cfg, JSON.stringify(MICRO));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const readCompare = async (out: string) => JSON.parse(await readFile(join(out, 'compare.json'), 'utf8')) as CompareJson;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sampleStd = (xs: number[]) => Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

describe('rlvr compare', () => {
  const out = () => join(root, 'cmp');

  test('two estimators x two seeds: run directories, compare.json consistent with each metrics.jsonl, the table', async () => {
    const r = await rlvr('compare', '--config', cfg, '--estimators', 'grpo,grail', '--seeds', '2', '--out', out());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`rlvr compare: 2 estimator(s) x 2 seed(s) (seeds 0, 1) = 4 runs -> ${out()}\n`);
    expect(r.stderr).toContain(`rlvr compare: run 1/4: grpo seed 0 -> ${join(out(), 'grpo', 'seed-0')}`);
    expect(r.stderr).toContain(`rlvr compare: run 2/4: grail seed 0 -> ${join(out(), 'grail', 'seed-0')}`);

    expect((await readdir(out())).sort()).toEqual(['compare.json', 'grail', 'grpo']);
    for (const e of ['grpo', 'grail']) expect((await readdir(join(out(), e))).sort()).toEqual(['seed-0', 'seed-1']);

    const c = await readCompare(out());
    expect(c).toMatchObject({
      command: 'compare',
      estimators: ['grpo', 'grail'],
      seeds: [0, 1],
      steps: 2,
      baseline: 'grpo',
      threshold: { kind: 'gain', value: 0.05 },
      n: 2,
      problems: 4,
      finalStep: 2,
    });
    expect(c.runs.map((x) => `${x.estimator}/${x.seed}`)).toEqual(['grpo/0', 'grail/0', 'grpo/1', 'grail/1']);

    const finals = new Map<string, { acc: number[]; pass: number[]; sec: number[]; start: number[] }>();
    const prompts = new Map<string, string[]>();
    for (const run of c.runs) {
      const dir = join(out(), run.dir);
      expect(run.dir).toBe(join(run.estimator, `seed-${run.seed}`));
      const data = await readRunDir(dir);
      expect(data.config).toMatchObject({ command: 'train', estimator: run.estimator, seed: run.seed, steps: 2 });
      expect(existsSync(join(dir, 'model', 'model.safetensors'))).toBe(true);
      // every eval of compare.json is the accuracy and pass@2 logged in the run's metrics.jsonl
      const logged = data.metrics
        .filter((m) => m.accuracy !== undefined)
        .map((m) => ({ step: m.step, accuracy: m.accuracy, passAtN: m['pass@2'] }));
      expect(run.evals.map(({ step, accuracy, passAtN }) => ({ step, accuracy, passAtN }))).toEqual(logged);
      expect(logged.map((e) => e.step)).toEqual([0, 2]);
      const times = data.metrics.flatMap((m) => (m['time/step_s'] == null ? [] : [m['time/step_s']]));
      expect(run.secondsPerStep).toBeCloseTo(median(times), 12);
      const f = finals.get(run.estimator) ?? { acc: [], pass: [], sec: [], start: [] };
      f.acc.push(logged.at(-1)!.accuracy!);
      f.pass.push(logged.at(-1)!.passAtN!);
      f.sec.push(median(times));
      f.start.push(logged[0]!.accuracy!);
      finals.set(run.estimator, f);
      prompts.set(
        `${run.estimator}/${run.seed}`,
        data.samples!.map((s) => `${s.step}:${s.prompt}`),
      );
    }
    // same seed, same problems in the same order, and the same starting accuracy, whatever the estimator
    for (const seed of [0, 1]) {
      expect(prompts.get(`grail/${seed}`)).toEqual(prompts.get(`grpo/${seed}`));
      expect(finals.get('grail')!.start[seed]).toBe(finals.get('grpo')!.start[seed]);
    }
    expect(prompts.get('grpo/0')).not.toEqual(prompts.get('grpo/1'));

    for (const row of c.rows) {
      const f = finals.get(row.estimator)!;
      expect(row.seeds).toEqual([0, 1]);
      expect(row.accuracy.mean).toBeCloseTo(mean(f.acc), 12);
      expect(row.accuracy.std).toBeCloseTo(sampleStd(f.acc), 12);
      expect(row.passAtN.mean).toBeCloseTo(mean(f.pass), 12);
      expect(row.secondsPerStep).toBeCloseTo(mean(f.sec), 12);
      expect(row.stepTimeRatio).toBeCloseTo(mean(f.sec) / mean(finals.get('grpo')!.sec), 12);
    }
    // the primary contrast (grail against the baseline), paired by seed: its difference is the mean per-seed one
    const g = finals.get('grail')!.acc;
    const b = finals.get('grpo')!.acc;
    expect(c.contrasts.map((x) => [x.role, x.a, x.b, x.test, x.seeds])).toEqual([['primary', 'grail', 'grpo', 'paired t', [0, 1]]]);
    expect(c.contrasts[0]!.diff).toBeCloseTo(mean(g.map((x, i) => x - b[i]!)), 12);
    // every evaluation's per-problem counts are in compare.json, and they give its accuracy
    for (const run of c.runs)
      for (const e of run.evals) {
        expect(e.correct).toHaveLength(e.problems);
        expect(e.correct.reduce((a, x) => a + x, 0) / (e.n * e.problems)).toBeCloseTo(e.accuracy, 12);
        // the synthetic task's held-out problems have chains: each evaluation carries its Step-Quality metrics
        const q = (e as { stepQuality?: { problems: number; samples: number; tokensPerSolved: { solved: number } } }).stepQuality!;
        expect(q).toMatchObject({ problems: e.problems, samples: e.n * e.problems });
        expect(q.tokensPerSolved.solved).toBe(e.correct.reduce((a, x) => a + x, 0));
      }
    expect(c.runs.every((x) => x.cpuSeconds > 0)).toBe(true);

    expect(r.stdout).toContain('step quality of the final evaluation (per run a mean over problems; here mean ± SD over seeds):');
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('rlvr compare: 2 estimators x 2 seeds (0, 1), 2 steps each, same seeds and data order for every estimator');
    expect(r.stdout).toMatch(/estimator +final accuracy +pass@2 +steps to \+5\.0 pts +s\/step +time vs grpo\n/);
    expect(r.stdout).toMatch(/\ngrpo +\d+\.\d% ± \d+\.\d +\d+\.\d% ± \d+\.\d +(\d+(\.\d)?|-) \([0-2]\/2\) +\d+\.\d\d +1\.00x\n/);
    expect(r.stdout).toMatch(
      /\nprimary: grail - grpo: final accuracy [+-]\d+\.\d points \(95% CI [+-]\d+\.\d to [+-]\d+\.\d; paired t p = [^,]+, Wilcoxon p = [\d.]+, 2 pairs\): (a difference|no difference detected) at alpha 0\.05/,
    );
    expect(r.stdout).toMatch(/\ncost: \d+\.\d CPU-minutes per seed \(the 2 runs of one seed/);
    expect(r.stdout).toContain(`summary: ${join(out(), 'compare.json')}`);

    const rep = await rlvr('report', join(out(), 'grail', 'seed-1'), '-q');
    expect(rep.code, rep.stderr).toBe(0);
    expect(existsSync(join(out(), 'grail', 'seed-1', 'report.html'))).toBe(true);
  });

  test('determinism: rlvr train with the same estimator and seed gives the same accuracies', async () => {
    const alone = join(root, 'alone');
    const r = await rlvr('train', '--config', cfg, '--estimator', 'grail', '--seed', '1', '--out', alone, '--json', '-q');
    expect(r.code, r.stderr).toBe(0);
    const evals = (JSON.parse(r.stdout) as { evals: Eval[] }).evals.map(({ step, accuracy, passAtN }) => ({ step, accuracy, passAtN }));
    const run = (await readCompare(out())).runs.find((x) => x.estimator === 'grail' && x.seed === 1)!;
    expect(run.evals.map(({ step, accuracy, passAtN }) => ({ step, accuracy, passAtN }))).toEqual(evals);
  });

  test('an existing comparison is refused without --resume; --resume reuses finished runs and redoes a missing one', async () => {
    const before = await readCompare(out());
    const again = await rlvr('compare', '--config', cfg, '--estimators', 'grpo,grail', '--seeds', '2', '--out', out());
    expect(again).toMatchObject({ code: 1, stdout: '' });
    expect(again.stderr).toBe(
      `rlvr compare: ${out()}: ${join(out(), 'grpo', 'seed-0', 'metrics.jsonl')} exists: pick another --out or pass --resume (a run directory is never overwritten)\n`,
    );

    await rm(join(out(), 'grail', 'seed-1'), { recursive: true });
    const r = await rlvr(
      'compare',
      '--config',
      cfg,
      '--estimators',
      'grpo,grail',
      '--seeds',
      '2',
      '--out',
      out(),
      '--resume',
      '--json',
      '-q',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const after = JSON.parse(r.stdout) as CompareJson;
    expect(after).toEqual(await readCompare(out()));
    const accuracies = (c: CompareJson) => c.runs.map((x) => [x.estimator, x.seed, x.evals]);
    expect(accuracies(after)).toEqual(accuracies(before));
    expect(after.rows.map((x) => [x.accuracy, x.passAtN, x.thresholdSteps])).toEqual(
      before.rows.map((x) => [x.accuracy, x.passAtN, x.thresholdSteps]),
    );

    // a finished run whose checkpoints were cleaned up is never trained again over its records
    const run = join(out(), 'grpo', 'seed-1');
    const metrics = await readFile(join(run, 'metrics.jsonl'), 'utf8');
    await rm(join(run, 'checkpoints'), { recursive: true });
    const gone = await rlvr('compare', '--config', cfg, '--estimators', 'grpo,grail', '--seeds', '2', '--out', out(), '--resume', '-q');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(
      `rlvr compare: ${run}: cannot resume: no checkpoint (${join(run, 'checkpoints')} does not exist), but the run records steps up to 2 (metrics.jsonl, samples.jsonl, evals.jsonl, checkpoint-weights.jsonl) and a final policy (model/): starting over would erase them: restore the checkpoints, or move ${run} aside to start the run over\n`,
    );
    expect(await readFile(join(run, 'metrics.jsonl'), 'utf8')).toBe(metrics);
  });

  test('one seed and an estimator from a plugin: nothing to test', async () => {
    const plugin = await writeHalvedPlugin(root);
    const dir = join(root, 'one-seed');
    const r = await rlvr(
      'compare',
      '--config',
      cfg,
      '--estimators',
      'grpo,grpo+halved',
      '--seeds',
      '1',
      '--steps',
      '1',
      '--plugin',
      plugin,
      '--trainer.schedule.lr',
      '1e-4',
      '--out',
      dir,
      '-q',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /\nprimary: grpo\+halved - grpo: final accuracy [+-]\d+\.\d points; n\/a: a side has one seed \(run more --seeds to test it\)\n/,
    );
    const c = await readCompare(dir);
    expect(c.rows.map((x) => [x.estimator, x.accuracy.std])).toEqual([
      ['grpo', null],
      ['grpo+halved', null],
    ]);
    expect(c.contrasts.map((x) => [x.a, x.b, x.detected])).toEqual([['grpo+halved', 'grpo', null]]);
    expect((await readRunDir(join(dir, 'grpo+halved', 'seed-0'))).metrics[1]!['weights/all/mean']).toBe(0.5);
    // a dotted override reaches every run's config
    expect((c as unknown as { config: { trainer: { schedule: { lr: number } } } }).config.trainer.schedule.lr).toBe(1e-4);
  });

  test('named variants: one row, one run directory and one verdict each, options from the config file and from dotted flags', async () => {
    const file = join(root, 'variants.json');
    await writeFile(
      file,
      JSON.stringify({
        ...MICRO,
        estimatorConfigs: { grail: { wMin: 0.3 } },
        variants: { 'grail-both': { estimator: 'grail', estimatorConfig: { symmetry: 'both' } }, unused: { estimator: 'rloo' } },
      }),
    );
    const dir = join(root, 'variants');
    const r = await rlvr(
      'compare',
      '--config',
      file,
      '--estimators',
      'dr-grpo,grail,grail-both,grail-mb',
      '--seeds',
      '0,1',
      '--steps',
      '1',
      '--variants.grail-mb.estimator',
      'grail',
      '--variants.grail-mb.saliency.refresh',
      'minibatch',
      '--variants.grail-mb.trainer.epochs',
      '2',
      '--out',
      dir,
      '-q',
    );
    expect(r.code, r.stderr).toBe(0);
    expect((await readdir(dir)).sort()).toEqual(['compare.json', 'dr-grpo', 'grail', 'grail-both', 'grail-mb']);
    const c = (await readCompare(dir)) as CompareJson & { variants: Record<string, unknown>; estimatorConfigs: Record<string, unknown> };
    expect(c.rows.map((x) => x.estimator)).toEqual(['dr-grpo', 'grail', 'grail-both', 'grail-mb']);
    expect(c.baseline).toBe('dr-grpo');
    expect(c.variants).toEqual({
      'grail-both': { estimator: 'grail', estimatorConfig: { symmetry: 'both' } },
      'grail-mb': { estimator: 'grail', saliency: { refresh: 'minibatch' }, trainer: { epochs: 2 } },
    });
    const config = async (row: string) => (await readRunDir(join(dir, row, 'seed-1'))).config as Record<string, any>;
    // a variant trains its estimator with the estimator's options (estimatorConfigs.grail) under its own
    expect(await config('grail')).toMatchObject({
      estimator: 'grail',
      estimatorConfig: { wMin: 0.3, symmetry: 'wrong' },
      trainer: { epochs: 1 },
      saliency: { refresh: 'batch' },
    });
    expect(await config('grail-both')).toMatchObject({
      estimator: 'grail',
      estimatorConfig: { wMin: 0.3, symmetry: 'both' },
      trainer: { epochs: 1 },
    });
    expect(await config('grail-mb')).toMatchObject({
      estimator: 'grail',
      estimatorConfig: { wMin: 0.3, symmetry: 'wrong' },
      trainer: { epochs: 2, schedule: { lr: 5e-5 } },
      saliency: { refresh: 'minibatch' },
    });
    const mb = (await readRunDir(join(dir, 'grail-mb', 'seed-0'))).metrics.find((m) => m.step === 1)!;
    expect(mb['refresh/count']).toBeGreaterThan(0);
    // the primary first (grail against dr-grpo by default), each variant against dr-grpo among the secondaries
    expect(r.stdout).toMatch(/\nprimary: grail - dr-grpo: final accuracy [+-]\d+\.\d points /);
    for (const row of ['grail-both', 'grail-mb'])
      expect(r.stdout).toMatch(new RegExp(`\\nsecondary \\(Holm over 2\\): ${row} - dr-grpo: final accuracy [+-]\\d+\\.\\d points `));
    expect(r.stdout).toMatch(/\ngrail-mb +\d+\.\d% ± \d+\.\d /);
  });

  test('--seeds auto: looks at the primary contrast at each planned point until a bound is crossed or the seeds run out', async () => {
    const dir = join(root, 'sequential');
    // a variant identical to grpo: every pair differs by 0 (p = 1), so no bound is crossed and every look is taken
    const r = await rlvr(
      'compare',
      '--config',
      cfg,
      '--estimators',
      'grpo,same',
      '--variants.same.estimator',
      'grpo',
      '--primary',
      'same:grpo',
      '--seeds',
      'auto',
      '--max-seeds',
      '4',
      '--looks',
      '2',
      '--steps',
      '1',
      '--out',
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /look 1\/2 at 2 pairs: primary same - grpo paired t p = 1\.00, stop below 0\.00\d+ \(O'Brien-Fleming \|z\| >= 2\.796\): going on/,
    );
    expect(r.stderr).toMatch(
      /look 2\/2 at 4 pairs: primary same - grpo paired t p = 1\.00, stop below 0\.04\d+ \(O'Brien-Fleming \|z\| >= 1\.977\): the last look/,
    );
    expect(r.stdout).toMatch(/\nsequential: stopped at look 2 of 2 \(4 pairs; O'Brien-Fleming bounds\): no bound crossed/);
    const c = await readCompare(dir);
    expect(c.rows.map((x) => x.seeds)).toEqual([
      [0, 1, 2, 3],
      [0, 1, 2, 3],
    ]);
    expect(c.contrasts[0]).toMatchObject({ a: 'same', b: 'grpo', role: 'primary', diff: 0, p: 1, detected: false });
  });

  test.each<[string[], number, RegExp]>([
    [
      ['--estimators', 'grpo,nope,grail+zzz'],
      1,
      /^rlvr compare: unknown estimators "nope", "grail\+zzz"; known estimators: .*dr-grpo.*grail.*grpo.*oar-g.*; or BASELINE\+WEIGHTING with baselines .* and weightings .*\n$/,
    ],
    [['--estimators', 'grpo,grpo'], 2, /^rlvr compare: --estimators: lists "grpo" twice\n\(rlvr compare --help lists the options\)\n$/],
    [
      ['--estimators', 'grpo,'],
      2,
      /^rlvr compare: --estimators: must be a comma-separated list of names \(got "grpo,"\)\n\(rlvr compare --help lists the options\)\n$/,
    ],
    [['--max-seeds', '4'], 2, /^rlvr compare: --max-seeds: needs --seeds auto \(a sequential comparison\)\n/],
    [['--seeds', 'auto', '--max-seeds', '4', '--looks', '3'], 2, /^rlvr compare: --looks: .*under 2 pairs.* \(--max-seeds 4\)\n/],
    [['--primary', 'grail:rloo'], 2, /^rlvr compare: --primary: "rloo" is not among the estimators \(dr-grpo, grpo, grail, oar-g\)\n/],
    [
      ['--primary', 'grail'],
      2,
      /^rlvr compare: --primary: must be two different estimators as A:B, e\.g\. grail:dr-grpo \(got "grail"\)\n/,
    ],
    [
      ['--seeds', 'three'],
      2,
      /^rlvr compare: --seeds: must be an integer from 1 to 1000 \(got "three"\)\n\(rlvr compare --help lists the options\)\n$/,
    ],
    [
      ['--seeds', '0'],
      2,
      /^rlvr compare: --seeds: must be an integer from 1 to 1000 \(got "0"\)\n\(rlvr compare --help lists the options\)\n$/,
    ],
    [['--seeds', '1,1'], 2, /^rlvr compare: --seeds: lists "1" twice\n\(rlvr compare --help lists the options\)\n$/],
    [
      ['--threshold', '120%'],
      2,
      /^rlvr compare: --threshold: must be an accuracy \(0\.55 or 55%\) or a gain over the starting accuracy \(\+0\.05 or \+5%\) \(got "120%"\)\n\(rlvr compare --help lists the options\)\n$/,
    ],
    [
      ['--baseline', 'rloo'],
      2,
      /^rlvr compare: --baseline: "rloo" is not among the estimators \(dr-grpo, grpo, grail, oar-g\)\n\(rlvr compare --help lists the options\)\n$/,
    ],
    [['--steps', '0'], 2, /^rlvr compare: --steps: must be an integer >= 1 \(got "0"\)\n\(rlvr compare --help lists the options\)\n$/],
    [['--bogus'], 2, /^rlvr compare: Unknown option '--bogus'.*\n\(rlvr compare --help lists the options\)\n$/],
    [
      ['--trainer.lrr', '1'],
      2,
      /^rlvr compare: --trainer\.lrr: unknown option: trainer has no key "lrr" \(keys: .*\)\n\(rlvr compare --help lists the options\)\n$/,
    ],
    [
      ['--estimators', 'dr-grpo,g', '--variants.g.estimator', 'grial'],
      1,
      /^rlvr compare: .*micro\.json, field variants\.g\.estimator: unknown estimator "grial"; known estimators: .*grail.*\n$/,
    ],
    [
      ['--estimators', 'dr-grpo,g', '--variants.g.estimator', 'grail', '--variants.g.estimatorConfig.symetry', 'both'],
      1,
      /^rlvr compare: .*micro\.json, field variants\.g\.estimatorConfig: .*unknown key: symetry \(did you mean symmetry\?\)\n$/,
    ],
    [
      ['--estimators', 'dr-grpo,g', '--variants.g.estimator', 'grail', '--variants.g.saliency.refresh', 'often'],
      1,
      /^rlvr compare: .*micro\.json, field variants\.g\.saliency\.refresh: must be one of "batch", "epoch", "minibatch", got "often"\n$/,
    ],
    [
      ['--estimators', 'dr-grpo,g', '--variants.g.estimator', 'grail', '--variants.g.trainer.epochs', '0'],
      1,
      /^rlvr compare: .*micro\.json, field variants\.g\.trainer\.epochs: Too small.*\n$/,
    ],
    [
      ['--estimators', 'dr-grpo,g', '--variants.g.estimatr', 'grail'],
      2,
      /^rlvr compare: --variants\.g\.estimatr: unknown option: variants\.g has no key "estimatr" \(did you mean --variants\.g\.estimator\?\) \(keys: estimator, estimatorConfig, saliency, trainer\)\n\(rlvr compare --help lists the options\)\n$/,
    ],
    [
      ['--estimators', 'dr-grpo,grail', '--variants.grail.estimator', 'grail'],
      1,
      /^rlvr compare: .*micro\.json, field variants\.grail: "grail" is a registered estimator: name the variant otherwise\n$/,
    ],
  ])('%s: fails before any training, naming the problem, writing nothing', async (args, code, message) => {
    const never = join(root, 'never');
    const r = await rlvr('compare', '--config', cfg, ...args, '--out', never);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
    expect(existsSync(never)).toBe(false);
  });

  test.each(['SIGTERM', 'SIGINT'] as const)(
    "%s during a run's step-0 evaluation stops at once (exit 130, no step waited for); --resume reads the finished run back",
    async (sig) => {
      const dir = join(root, `stop-${sig}`);
      // a step-0 evaluation of 128 problems x 4 samples: seconds, long enough for the signal to land inside it
      const config = join(root, `stop-${sig}.json`);
      await writeFile(config, JSON.stringify({ ...MICRO, eval: { ...MICRO.eval, problems: 128, n: 4 } }));
      const args = ['compare', '--config', config, '--estimators', 'grpo,grail', '--seeds', '1', '--out', dir];
      const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
      let stderr = '';
      const code = await new Promise<number | null>((resolve) => {
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          // the second run's policy line comes after its start-up, right before its step-0 evaluation
          if (/grail seed 0: policy: /.test(stderr) && !child.killed) child.kill(sig);
        });
        child.on('close', resolve);
      });
      expect(code, stderr).toBe(130);
      expect(stderr).not.toContain('stopping after this step');
      expect(
        stderr.endsWith(
          `rlvr compare: nothing summarized: rlvr compare --out ${dir} --resume (same options) continues\nrlvr compare: interrupted\n`,
        ),
        stderr,
      ).toBe(true);
      const first = join(dir, 'grpo', 'seed-0', 'metrics.jsonl');
      const firstBefore = await readFile(first, 'utf8');
      expect((await readRunDir(join(dir, 'grpo', 'seed-0'))).metrics.map((m) => m.step)).toEqual([0, 1, 2]);
      const second = join(dir, 'grail', 'seed-0', 'metrics.jsonl');
      expect(existsSync(second) && (await readFile(second, 'utf8')).includes('"step":1')).toBe(false);
      expect(existsSync(join(dir, 'compare.json'))).toBe(false);

      const rest = await rlvr(...args, '--resume', '-q');
      expect(rest.code, rest.stderr).toBe(0);
      expect(await readFile(first, 'utf8')).toBe(firstBefore);
      const c = await readCompare(dir);
      expect(c.runs.map((r) => [r.estimator, r.seed, r.evals.map((e) => e.step)])).toEqual([
        ['grpo', 0, [0, 2]],
        ['grail', 0, [0, 2]],
      ]);
    },
  );

  test('SIGTERM during a step stops after it, saying it was SIGTERM (not Ctrl-C), exit 130, nothing summarized', async () => {
    const dir = join(root, 'term-in-step');
    const config = join(root, 'term-in-step.json');
    await writeFile(
      config,
      JSON.stringify({ ...MICRO, steps: 400, checkpointEvery: 0, sampleEvery: 0, eval: { ...MICRO.eval, every: 0 } }),
    );
    const args = ['compare', '--config', config, '--estimators', 'grpo,grail', '--seeds', '1', '--out', dir];
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stderr = '';
    const code = await new Promise<number | null>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        // the first progress line (every 5 steps when not a terminal): a step is in flight or about to be
        if (/grpo s0 \[[#.]+\] +5\/400/.test(stderr) && !child.killed) child.kill('SIGTERM');
      });
      child.on('close', resolve);
    });
    expect(code, stderr).toBe(130);
    expect(stderr).toContain('rlvr compare: SIGTERM: stopping after this step (a second SIGTERM or Ctrl-C exits now)\n');
    expect(stderr).not.toContain('Ctrl-C again');
    expect(stderr).toMatch(/grpo seed 0: stopped after step \d+; checkpoint saved/);
    expect(stderr).toContain(
      `rlvr compare: stopped after 0 of 2 runs; nothing summarized: rlvr compare --out ${dir} --resume (same options) continues\n`,
    );
  }, 300_000);

  test('--resume without --out, and --help', async () => {
    const resume = await rlvr('compare', '--resume');
    expect(resume.code).toBe(2);
    expect(resume.stderr).toMatch(
      /^rlvr compare: --resume: needs --out: the comparison directory to continue\n\(rlvr compare --help lists the options\)\n$/,
    );
    const help = await rlvr('compare', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: rlvr compare [options]');
    expect((await rlvr('--help')).stdout).toMatch(/\n {2}compare +train estimators on the same seeds/);
  });
});
