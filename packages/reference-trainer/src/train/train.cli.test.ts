import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readRunDir } from '@rlvr/report';
import { TrainRunConfigSchema } from './config.js';
import type { TrainConfig } from './config.js';
import { CLI, rlvr } from '../test-utils/run-cli.js';
import { writeHalvedPlugin } from '../test-utils/halved-plugin.js';

/** A micro run of the embedded default: the shipped warm-up checkpoint, 2 prompts x 4 completions. */
const MICRO = {
  steps: 4,
  rollout: { prompts: 2, groupSize: 4, maxNewTokens: 24 },
  eval: { every: 2, problems: 6, n: 2, maxNewTokens: 24 },
  checkpointEvery: 1,
  keepCheckpoints: 5,
  sampleEvery: 2,
  samples: 3,
  backend: 'wasm',
};

let root: string;
let cfg: string;
beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -b packages/reference-trainer)`);
  root = await mkdtemp(join(tmpdir(), 'rlvr-train-'));
  cfg = join(root, 'micro.json');
  await writeFile(cfg, JSON.stringify(MICRO));
  await selectBackend({ backend: 'wasm' });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** `root/NAME.json` holding `value`. */
async function writeJson(name: string, value: unknown): Promise<string> {
  const f = join(root, `${name}.json`);
  await writeFile(f, JSON.stringify(value));
  return f;
}

/** A micro config training on `root/NAME.jsonl` (holding `rows`), one problem held out. */
async function dataConfig(name: string, rows: string): Promise<string> {
  await writeFile(join(root, `${name}.jsonl`), rows);
  return writeJson(name, {
    ...MICRO,
    eval: { ...MICRO.eval, problems: 1 },
    data: { train: join(root, `${name}.jsonl`), format: { question: 'problem', answer: 'solution' } },
  });
}

/** Metrics without the wall-clock columns, which differ from run to run. */
const untimed = async (dir: string) =>
  (await readRunDir(dir)).metrics.map((m) =>
    Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/') && k !== 'tokens_per_s')),
  );

describe('rlvr train', () => {
  test('a micro run writes metrics, samples, checkpoints and a loadable model; a report renders from it', async () => {
    const out = join(root, 'full');
    const r = await rlvr('train', '--config', cfg, '--out', out, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('no learning signal');
    const summary = JSON.parse(r.stdout) as {
      steps: number;
      evals: { step: number; accuracy: number; passAtN: number; n: number; problems: number }[];
      resumedFrom: number;
      estimator: string;
    };
    expect(summary).toMatchObject({ steps: 4, resumedFrom: 0, estimator: 'grail' });
    expect(summary.evals.map((e) => e.step)).toEqual([0, 2, 4]);
    for (const e of summary.evals) {
      expect(e).toMatchObject({ n: 2, problems: 6 });
      // mean accuracy over n samples is a multiple of 1 / (problems * n); pass@n >= mean accuracy
      expect(Number.isInteger(Math.round(e.accuracy * 12 * 1e6) / 1e6)).toBe(true);
      expect(e.passAtN).toBeGreaterThanOrEqual(e.accuracy);
    }
    const evalLines = (await readFile(join(out, 'evals.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { step: number; correct: number[]; accuracy: number });
    expect(evalLines.map((e) => e.step)).toEqual([0, 2, 4]);
    for (const e of evalLines) {
      expect(e.correct).toHaveLength(6);
      expect(e.accuracy).toBeCloseTo(e.correct.reduce((a, c) => a + c, 0) / 12, 12);
    }
    expect(r.stderr).toContain('rlvr train: eval step 0: accuracy ');
    expect(r.stderr).toMatch(/rlvr train: \[#+\] 4\/4 {2}reward \d\.\d\d {2}acc \d+\.\d%/);
    // not a terminal: no cursor or colour codes; the last progress line's s/step is the summary's median
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts an ANSI colour code
    expect(r.stderr).not.toMatch(/\x1b/);
    const lastRate = /4\/4 .* (\d+\.\d) s\/step/.exec(r.stderr)?.[1];
    expect(lastRate).toBe((summary as unknown as { secondsPerStep: number }).secondsPerStep.toFixed(1));

    const run = await readRunDir(out);
    expect(run.config).toMatchObject({ command: 'train', estimator: 'grail', steps: 4 });
    expect(run.metrics.map((m) => m.step)).toEqual([0, 1, 2, 3, 4]);
    const [m0, m1] = run.metrics;
    expect(m0!.accuracy).toBe(summary.evals[0]!.accuracy);
    expect(m0!['pass@2']).toBe(summary.evals[0]!.passAtN);
    for (const m of run.metrics.slice(1)) {
      expect(m['reward/mean']).toBeGreaterThanOrEqual(0);
      expect(m['reward/mean']).toBeLessThanOrEqual(1);
      expect(m.trained_rollouts).toBe(8);
      expect(m['time/step_s']).toBeGreaterThan(0);
    }
    // GRAIL's weights, under the report's names: answer content gets w_max (5 by default)
    expect(Object.keys(m1!)).toEqual(
      expect.arrayContaining([
        'weights/correct/mean',
        'weights/wrong/mean',
        'weights/all/max',
        'loss/policy',
        'kl/approx',
        'entropy',
        'clip/low_frac',
      ]),
    );
    expect(run.metrics[2]!.accuracy).toBe(summary.evals[1]!.accuracy);
    expect(run.metrics[3]!.accuracy).toBeUndefined();

    // samples of steps 1, 2 and 4, with one weight per token and spans inside the completion
    expect([...new Set(run.samples!.map((s) => s.step))]).toEqual([1, 2, 4]);
    for (const s of run.samples!) {
      expect(s.tokens.length).toBeGreaterThan(0);
      expect(s.correct).toBe(s.reward > 0);
      if (s.spans) expect(s.weights.slice(s.spans.content[0], s.spans.content[1]).every((w) => w === 5 || s.advantage === 0)).toBe(true);
    }

    // checkpoint-weights.jsonl: at every evaluation, GRAIL weights (symmetry both) of the same 2 problems x 4 completions
    const cw = run.checkpointWeights!;
    expect([...new Set(cw.map((x) => x.step))]).toEqual([0, 2, 4]);
    for (const step of [0, 2, 4]) expect(cw.filter((x) => x.step === step).map((x) => x.rollout)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const x of cw) {
      const at0 = cw.find((y) => y.step === 0 && y.rollout === x.rollout)!;
      expect([x.tokens, x.spans, x.correct]).toEqual([at0.tokens, at0.spans, at0.correct]);
      if (x.spans === null) expect(new Set(x.weights)).toEqual(new Set([1]));
      else {
        expect(x.reasoning).toBe(x.spans.open[0]);
        // symmetry both: every rollout with a box is weighted, whatever its advantage; content w_max, post-answer w_mean
        expect(x.weights.slice(x.spans.content[0], x.spans.content[1]).every((w) => w === 5)).toBe(true);
        expect(x.weights.slice(x.spans.close[0]).every((w) => w === 1)).toBe(true);
      }
    }
    // recomputed with each checkpoint's parameters: the reasoning weights move
    expect(cw.filter((x) => x.step === 4).map((x) => x.weights)).not.toEqual(cw.filter((x) => x.step === 0).map((x) => x.weights));

    const ckpts = (await readdir(join(out, 'checkpoints'))).filter((d) => d.startsWith('step-'));
    expect(ckpts).toEqual(['step-000001', 'step-000002', 'step-000003', 'step-000004']);
    const model = loadModel(join(out, 'model'));
    const tok = loadTokenizer(join(out, 'model'));
    expect(model.numParameters()).toBe(344_112);
    expect(tok.decode(tok.encode('Tom has 3 apples. \\boxed{5}'))).toBe('Tom has 3 apples. \\boxed{5}');
    model.dispose();

    const rep = await rlvr('report', out, '-q');
    expect(rep.code, rep.stderr).toBe(0);
    const html = await readFile(join(out, 'report.html'), 'utf8');
    expect(html).toContain('Held-out accuracy');
    expect(html).toContain('<svg');
    expect(html).toMatch(/data-chart="checkpoint-profile"><figcaption>[^<]*<\/figcaption><svg/);
    expect(html).toContain('data-chart="checkpoint-heatmap"');
  });

  test('--resume of a run made with --report writes its report again', async () => {
    const out = join(root, 'reported');
    const tiny = await writeJson('tiny-report', {
      ...MICRO,
      steps: 1,
      rollout: { ...MICRO.rollout, groupSize: 2 },
      eval: { ...MICRO.eval, problems: 2 },
    });
    const first = await rlvr('train', '--config', tiny, '--out', out, '--report', '-q');
    expect(first.code, first.stderr).toBe(0);
    const steps = (html: string) => /<th>optimizer steps logged<\/th><td>([^<]*)<\/td>/.exec(html)?.[1];
    expect(steps(await readFile(join(out, 'report.html'), 'utf8'))).toBe('2 (steps 0–1)');
    const rest = await rlvr('train', '--out', out, '--resume', '--steps', '2', '-q');
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.stdout).toContain(`report: ${join(out, 'report.html')}\n`);
    expect(steps(await readFile(join(out, 'report.html'), 'utf8'))).toBe('3 (steps 0–2)');
  }, 300_000);

  test('a data file smaller than the config asks for: one warning line each, before anything else happens', async () => {
    const rows = '{"problem":"1+1?","solution":"2"}\n{"problem":"2+2?","solution":"4"}\n';
    await writeFile(join(root, 'small-eval.jsonl'), '{"problem":"3+3?","solution":"6"}\n');
    const cfgFile = await dataConfig('small', rows);
    const withEval = await writeJson('small-eval', {
      ...JSON.parse(await readFile(cfgFile, 'utf8')),
      eval: { ...MICRO.eval, problems: 6 },
      data: { train: join(root, 'small.jsonl'), eval: join(root, 'small-eval.jsonl'), format: { question: 'problem', answer: 'solution' } },
      rollout: { ...MICRO.rollout, prompts: 3 },
    });
    // a path under a file: the run stops right after reading the problems
    const blocker = join(root, 'a-file');
    await writeFile(blocker, '');
    const r = await rlvr('train', '--config', withEval, '--out', join(blocker, 'run'));
    expect(r.code).toBe(1);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('warning'));
    expect(warnings).toEqual([
      `rlvr train: warning: eval.problems is 6 but ${join(root, 'small-eval.jsonl')} has 1 rows: evaluating 1`,
      `rlvr train: warning: ${join(root, 'small.jsonl')} has 2 training problems, fewer than rollout.prompts = 3: every step repeats some`,
    ]);
  });

  test("resume reads the run's own config, repairs a torn log, cleans a killed export, and reproduces the uninterrupted run", async () => {
    const full = join(root, 'full');
    const out = join(root, 'resumed');
    const first = await rlvr('train', '--config', cfg, '--out', out, '--steps', '2', '-q');
    expect(first.code, first.stderr).toBe(0);
    // config.json holds the resolved config, the estimator's defaults included, and validates against its schema
    const written = JSON.parse(await readFile(join(out, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(written).toMatchObject({
      command: 'train',
      estimator: 'grail',
      steps: 2,
      estimatorConfig: { wMin: 0.5, wMax: 5, symmetry: 'wrong' },
    });
    expect(TrainRunConfigSchema.safeParse(written).success).toBe(true);
    // A fresh run never writes over a run directory.
    const again = await rlvr('train', '--config', cfg, '--out', out, '--steps', '2');
    expect(again).toMatchObject({
      code: 1,
      stderr: `rlvr train: ${out}: ${join(out, 'metrics.jsonl')} exists: pick another --out or pass --resume (a run directory is never overwritten)\n`,
    });
    // a crash (or a full disk) mid-line, a record past the checkpoint, an export killed midway
    await appendFile(join(out, 'metrics.jsonl'), '{"step":3,"reward/mean":0.5}\n{"step":4,"rew');
    await appendFile(join(out, 'evals.jsonl'), '{"step":4,"accur');
    await mkdir(join(out, 'model.tmp-99999'));
    await mkdir(join(out, '.model.tmp-12345'));
    // no --config: the run's own config.json, with --steps extending it
    const rest = await rlvr('train', '--out', out, '--resume', '--steps', '4');
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.stderr).toContain(
      `rlvr train: ${join(out, 'metrics.jsonl')}: cut a torn last line (14 bytes) and 1 record after step 2; 3 kept\n`,
    );
    expect(rest.stderr).toContain(`rlvr train: ${join(out, 'evals.jsonl')}: cut a torn last line (16 bytes); 2 kept\n`);
    expect(rest.stderr).toContain(`resumed from ${join(out, 'checkpoints', 'step-000002')} (step 2)`);
    expect(await untimed(out)).toEqual(await untimed(full));
    expect(await readFile(join(out, 'evals.jsonl'), 'utf8')).toBe(await readFile(join(full, 'evals.jsonl'), 'utf8'));
    // the fixed evaluation rollouts are read back, not resampled with the resumed policy
    expect(await readFile(join(out, 'checkpoint-weights.jsonl'), 'utf8')).toBe(
      await readFile(join(full, 'checkpoint-weights.jsonl'), 'utf8'),
    );
    const weights = (d: string) => readFile(join(d, 'model', 'model.safetensors'));
    expect((await weights(out)).equals(await weights(full))).toBe(true);
    expect((await readdir(out)).filter((f) => f.includes('.tmp-'))).toEqual([]);
    // what shapes the trajectory must agree with the run's config: each difference named with both values
    const other = join(root, 'lr.json');
    await writeFile(other, JSON.stringify({ ...MICRO, steps: 6, trainer: { schedule: { lr: 1e-3 } } }));
    const bad = await rlvr('train', '--config', other, '--out', out, '--resume');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      `rlvr train: ${join(out, 'config.json')}: cannot resume: the run's config differs in trainer.schedule.lr: the run has 0.00005, given 0.001 (only steps, checkpoint and sample cadence, backend, workers and plugins may change)\n`,
    );
    const flags = await rlvr('train', '--out', out, '--resume', '--seed', '5', '--rollout.temperature', '0.7');
    expect(flags.code).toBe(1);
    expect(flags.stderr).toMatch(/differs in rollout\.temperature: the run has 1, given 0\.7; seed: the run has 0, given 5 \(/);
    // another estimator is named as such, not as the run's GRAIL options refused by GRPO
    const estimator = await rlvr('train', '--out', out, '--resume', '--estimator', 'grpo');
    expect(estimator.code).toBe(1);
    expect(estimator.stderr).toBe(
      `rlvr train: ${join(out, 'config.json')}: cannot resume: the run's config differs in estimator: the run has "grail", given "grpo" (only steps, checkpoint and sample cadence, backend, workers and plugins may change)\n`,
    );
  });

  test('checkpoints that cannot lie: the flags set the cadence, a damaged checkpoint is passed over by name, a NaN is refused by name, --resume needs a run', async () => {
    // --checkpoint-every 0 over MICRO's 1: the final checkpoint only
    const a = join(root, 'ckpt-flags');
    const r = await rlvr('train', '--config', cfg, '--out', a, '--steps', '2', '--checkpoint-every', '0', '-q');
    expect(r.code, r.stderr).toBe(0);
    expect(await readdir(join(a, 'checkpoints'))).toEqual(['step-000002']);
    expect((await readFile(join(a, 'checkpoints', 'step-000002', 'SHA256SUMS'), 'utf8')).split('\n').map((l) => l.slice(66))).toEqual([
      'checkpoint.json',
      'model/config.json',
      'model/model.safetensors',
      'optimizer.safetensors',
      '',
    ]);
    const bad = await rlvr('train', '--config', cfg, '--keep-checkpoints', '0');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'rlvr train: --keep-checkpoints: must be an integer from 1 to 1000 (got "0")\n(rlvr train --help lists the options)\n',
    );

    // one byte flipped in the tensor data of the latest checkpoint: named, passed over, and the run ends as the clean one
    const b = join(root, 'ckpt-damaged');
    expect((await rlvr('train', '--config', cfg, '--out', b, '--steps', '2', '-q')).code).toBe(0);
    const weights = join(b, 'checkpoints', 'step-000002', 'model', 'model.safetensors');
    const bytes = await readFile(weights);
    bytes[bytes.length - 1000] = bytes[bytes.length - 1000]! ^ 0x10;
    await writeFile(weights, bytes);
    const resumed = await rlvr('train', '--out', b, '--resume', '--steps', '2');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(
      `rlvr train: warning: ${weights}: SHA-256 differs from SHA256SUMS: the file changed after it was saved: checkpoint ${join(b, 'checkpoints', 'step-000002')} is damaged; falling back to the one before it\n`,
    );
    expect(resumed.stderr).toContain(`resumed from ${join(b, 'checkpoints', 'step-000001')} (step 1)`);
    const model = (d: string) => readFile(join(d, 'model', 'model.safetensors'));
    expect((await model(b)).equals(await model(a))).toBe(true);

    // a NaN in the optimizer state with sums made to match (an older version's checkpoint): refused, naming tensor and file
    const { SafetensorsFile, writeSafetensors } = await import('@rlvr/policy');
    const { createHash } = await import('node:crypto');
    const step2 = join(b, 'checkpoints', 'step-000002');
    const optimizer = join(step2, 'optimizer.safetensors');
    const st = SafetensorsFile.open(optimizer);
    const tensors = new Map([...st.tensors.keys()].map((k) => [k, { ...st.read(k), dtype: 'F32' as const }]));
    const first = [...tensors.keys()][0]!;
    (tensors.get(first)!.data as Float32Array)[1] = Number.NaN;
    writeSafetensors(optimizer, tensors);
    const sums = (await readFile(join(step2, 'SHA256SUMS'), 'utf8')).replace(
      /^[0-9a-f]{64}(?= {2}optimizer\.safetensors$)/m,
      createHash('sha256')
        .update(await readFile(optimizer))
        .digest('hex'),
    );
    await writeFile(join(step2, 'SHA256SUMS'), sums);
    const nan = await rlvr('train', '--out', b, '--resume', '--steps', '3', '-q');
    expect(nan.code).toBe(1);
    expect(nan.stderr).toMatch(
      new RegExp(`cannot resume: ${optimizer.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, tensor ${first}: holds NaN at index 1\\n$`),
    );
    expect(await readdir(join(b, 'checkpoints'))).toEqual(['step-000001', 'step-000002']);

    // every checkpoint damaged: an error, not a fresh start
    await writeFile(join(b, 'checkpoints', 'step-000001', 'checkpoint.json'), '{}\n');
    await rm(join(step2, 'SHA256SUMS'));
    const none = await rlvr('train', '--out', b, '--resume', '--steps', '3');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`cannot resume: every checkpoint in ${join(b, 'checkpoints')} is damaged\n`);
    expect((await readRunDir(b)).metrics.map((m) => m.step)).toEqual([0, 1, 2]);

    // --resume of a directory without a run: an error naming it, nothing written
    const typo = join(root, 'ckpt-typo');
    const missing = await rlvr('train', '--out', typo, '--resume');
    expect(missing).toMatchObject({
      code: 1,
      stderr: `rlvr train: --out: cannot resume: ${typo} holds no run (no config.json); check --out, or drop --resume to start a run there\n`,
    });
    expect(existsSync(typo)).toBe(false);
  });

  test('a resume that finds no checkpoint refuses a run that recorded steps, naming what it found; one that recorded none starts over in one line', async () => {
    const out = join(root, 'no-checkpoints');
    expect((await rlvr('train', '--config', cfg, '--out', out, '--steps', '2', '--checkpoint-every', '0', '-q')).code).toBe(0);
    const files = async () =>
      Object.fromEntries(
        await Promise.all(['metrics.jsonl', 'evals.jsonl', 'model/model.safetensors'].map(async (f) => [f, await readFile(join(out, f))])),
      );
    const before = await files();
    // the checkpoints cleaned up (or never written after --checkpoint-every 0 and a kill): nothing is erased
    await rm(join(out, 'checkpoints'), { recursive: true });
    const gone = await rlvr('train', '--out', out, '--resume', '--steps', '2');
    expect(gone).toMatchObject({
      code: 1,
      stderr: `rlvr train: ${out}: cannot resume: no checkpoint (${join(out, 'checkpoints')} does not exist), but the run records steps up to 2 (metrics.jsonl, samples.jsonl, evals.jsonl, checkpoint-weights.jsonl) and a final policy (model/): starting over would erase them: restore the checkpoints, or move ${out} aside to start the run over\n`,
    });
    await mkdir(join(out, 'checkpoints', 'step-000002.tmp-1'), { recursive: true });
    const partial = await rlvr('train', '--out', out, '--resume', '--steps', '3', '-q');
    expect(partial.code).toBe(1);
    expect(partial.stderr).toContain(`(${join(out, 'checkpoints')} holds no complete checkpoint: step-000002.tmp-1)`);
    expect(await files()).toEqual(before);
    // a fresh run over it, even with metrics.jsonl gone, names what it would erase
    await rm(join(out, 'metrics.jsonl'));
    const fresh = await rlvr('train', '--config', cfg, '--out', out, '--steps', '1');
    expect(fresh).toMatchObject({
      code: 1,
      stderr: `rlvr train: ${out}: it holds a run's steps up to 2 (samples.jsonl, evals.jsonl, checkpoint-weights.jsonl) and a final policy (model/): pick another --out or pass --resume (a run directory is never overwritten)\n`,
    });

    // a run that died in its step-0 evaluation recorded no step: --resume starts it over, saying so
    const early = join(root, 'no-step');
    await mkdir(early);
    await cp(join(out, 'config.json'), join(early, 'config.json'));
    await writeFile(join(early, 'metrics.jsonl'), '{"step":0,"accuracy":0.5}\n{"step":1,"rew');
    const over = await rlvr('train', '--out', early, '--resume', '--steps', '1');
    expect(over.code, over.stderr).toBe(0);
    expect(over.stderr.split('\n').filter((l) => l.includes('starting'))).toEqual([
      `rlvr train: ${early}: no checkpoint and no step recorded: starting the run over`,
    ]);
    expect((await readRunDir(early)).metrics.map((m) => m.step)).toEqual([0, 1]);
  }, 300_000);

  test('a run whose groups all got one reward warns once, after its first steps, saying why it learns nothing', async () => {
    // 2 new tokens: no completion reaches its \\boxed{} answer
    const out = join(root, 'no-signal');
    const one = ['--eval.problems', '1', '--eval.n', '1'];
    const r = await rlvr('train', '--config', cfg, '--out', out, '--steps', '1', '--rollout.maxNewTokens', '2', ...one);
    expect(r.code, r.stderr).toBe(0);
    // one held-out problem, one sample: singular nouns, and no standard error from one problem
    expect(r.stderr).toMatch(/eval step 0: accuracy \S+ \(mean of 1 sample at T=0\.6\), pass@1 \S+, greedy \S+ on 1 held-out problem\n/);
    expect(r.stdout).toMatch(
      /^held-out accuracy \(1 problem, mean of 1 sample\): \S+ at step 0 -> \S+ at step 1 \([+-]\d+\.\d points, no s\.e\. from 1 problem\)$/m,
    );
    expect(r.stderr.split('\n').filter((l) => l.includes('warning'))).toEqual([
      'rlvr train: warning: no learning signal in step 1: every group of completions got one reward, so every advantage is 0 and the policy does not change (2 groups, 8 completions): no completion writes a final answer (\\boxed{...}) on this data; 8 of 8 stopped at rollout.maxNewTokens: the policy does not use the answer format the verifier reads (check the prompt template, or warm the model up on it)',
    ]);
  }, 300_000);

  test('--workers: 2 policy workers (sampling, signals, update) train within rounding of 1, and a checkpoint written with 2 resumes with 1', async () => {
    const two = join(root, 'workers-2');
    const one = join(root, 'workers-1');
    const [a, b] = await Promise.all([
      rlvr('train', '--config', cfg, '--out', two, '--workers', '2', '--steps', '2'),
      rlvr('train', '--config', cfg, '--out', one, '--workers', '1', '--steps', '2'),
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(a.stderr).toContain('backend wasm, 2 policy workers)');
    expect(b.stderr).toContain('backend wasm, no policy workers)');
    const [m2, m1] = [(await readRunDir(two)).metrics, (await readRunDir(one)).metrics];
    // step 1 samples with the same weights: the same batch, the same loss up to float rounding
    expect(m2[1]!['reward/mean']).toBe(m1[1]!['reward/mean']);
    expect(m2[1]!['loss/policy']).toBeCloseTo(m1[1]!['loss/policy']!, 6);
    // step 1 runs on the weights the workers started with (nothing to sync); step 2 on those step 1 updated
    expect(m2[1]!['time/weight_sync_s']).toBe(0);
    expect(m2[2]!['time/weight_sync_s']).toBeGreaterThan(0);
    expect(m2[1]!['time/grad_reduce_s']).toBeGreaterThan(0);
    expect(m1[1]!['time/weight_sync_s']).toBeUndefined();
    expect(JSON.parse(await readFile(join(two, 'config.json'), 'utf8'))).toMatchObject({ workers: 2 });
    const resumed = await rlvr('train', '--out', two, '--resume', '--workers', '1', '--steps', '3');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`resumed from ${join(two, 'checkpoints', 'step-000002')} (step 2)`);
    expect(resumed.stderr).toContain('no policy workers)');
    expect((await readRunDir(two)).metrics.map((m) => m.step)).toEqual([0, 1, 2, 3]);
    const bad = await rlvr('train', '--config', cfg, '--workers', '0');
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.stderr).toContain('--workers: must be auto or an integer from 1 to 256 (got "0")');
  });

  test('Ctrl-C stops after the step with a checkpoint, exit code 130; --resume finishes the run', async () => {
    const out = join(root, 'interrupted');
    const long = join(root, 'long.json');
    await writeFile(long, JSON.stringify({ ...MICRO, steps: 400, checkpointEvery: 0, sampleEvery: 0, eval: { ...MICRO.eval, every: 0 } }));
    const child = spawn(process.execPath, [CLI, 'train', '--config', long, '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        // the first progress line (every 5 steps when not a terminal): interrupt
        if (/\] +5\/400/.test(stderr) && !child.killed) child.kill('SIGINT');
      });
      child.on('close', resolve);
    });
    expect(code, stderr).toBe(130);
    expect(stderr).toContain('rlvr train: stopping after this step (Ctrl-C again to exit now)\n');
    const done = Number(/stopped after step (\d+)/.exec(stderr)?.[1]);
    expect(done).toBeGreaterThanOrEqual(5);
    expect(stdout).toContain(`rlvr train: stopped early: grail, seed 0, ${done}/400 steps`);
    expect(await readdir(join(out, 'checkpoints'))).toEqual([`step-${String(done).padStart(6, '0')}`]);
    expect(existsSync(join(out, 'model'))).toBe(false);
    const rest = await rlvr('train', '--config', long, '--out', out, '--resume', '--steps', String(done + 2), '-q');
    expect(rest.code, rest.stderr).toBe(0);
    expect((await readRunDir(out)).metrics.map((m) => m.step)).toEqual(Array.from({ length: done + 3 }, (_, i) => i));
  });

  test('any registered estimator by name, and one registered by a plugin module', async () => {
    const plugin = await writeHalvedPlugin(root);
    const grpo = await rlvr(
      'train',
      '--config',
      cfg,
      '--out',
      join(root, 'grpo'),
      '--steps',
      '1',
      '--estimator',
      'grpo',
      '--trainer.schedule.lr',
      '1e-4',
      '--eval.greedy=false',
      '-q',
    );
    expect(grpo.code, grpo.stderr).toBe(0);
    // dotted overrides reach nested options; the run's config.json starts the same run again
    const grpoConfig = JSON.parse(await readFile(join(root, 'grpo', 'config.json'), 'utf8')) as TrainConfig;
    expect([grpoConfig.trainer.schedule.lr, grpoConfig.eval.greedy, grpoConfig.trainer.clipLow]).toEqual([1e-4, false, 0.2]);
    const again = await rlvr('train', '--config', join(root, 'grpo', 'config.json'), '--out', join(root, 'grpo-again'), '-q');
    expect(again.code, again.stderr).toBe(0);
    expect(await untimed(join(root, 'grpo-again'))).toEqual(await untimed(join(root, 'grpo')));
    const r = await rlvr(
      'train',
      '--config',
      cfg,
      '--out',
      join(root, 'halved'),
      '--steps',
      '1',
      '--estimator',
      'grpo+halved',
      '--plugin',
      plugin,
      '-q',
    );
    expect(r.code, r.stderr).toBe(0);
    const [, g] = (await readRunDir(join(root, 'grpo'))).metrics;
    const [, h] = (await readRunDir(join(root, 'halved'))).metrics;
    expect(h!['weights/all/mean']).toBe(0.5);
    expect(h!['reward/mean']).toBe(g!['reward/mean']);
    expect(h!['adv/advantage_abs_mean']).toBeCloseTo(g!['adv/advantage_abs_mean']! / 2, 6);
  });

  test('saliency.refresh minibatch: GRAIL recomputed before every update after the first, recorded resolved in config.json', async () => {
    const out = join(root, 'refresh');
    const r = await rlvr(
      'train',
      '--config',
      cfg,
      '--out',
      out,
      '--steps',
      '1',
      '--eval.every',
      '0',
      '--eval.greedy=false',
      '--saliency.refresh',
      'minibatch',
      '--trainer.epochs',
      '2',
      '--trainer.miniBatches',
      '2',
      '-q',
    );
    expect(r.code, r.stderr).toBe(0);
    const config = JSON.parse(await readFile(join(out, 'config.json'), 'utf8')) as TrainConfig;
    expect(config.saliency).toMatchObject({
      refresh: 'minibatch',
      'grad-x-emb': { alignment: 'previous', answerSpan: 'boxed', temperature: 1 },
    });
    const [, step] = (await readRunDir(out)).metrics;
    expect(step!['refresh/count']).toBe(3);
    // the default records refresh batch and hands the trainer no refresh
    const plain = await rlvr(
      'train',
      '--config',
      cfg,
      '--out',
      join(root, 'no-refresh'),
      '--steps',
      '1',
      '--eval.every',
      '0',
      '--eval.greedy=false',
      '-q',
    );
    expect(plain.code, plain.stderr).toBe(0);
    expect((JSON.parse(await readFile(join(root, 'no-refresh', 'config.json'), 'utf8')) as TrainConfig).saliency).toMatchObject({
      refresh: 'batch',
    });
    expect((await readRunDir(join(root, 'no-refresh'))).metrics[1]).not.toHaveProperty('refresh/count');
  });

  test('your own dataset: problems from a JSONL file, some held out for evaluation and never trained on', async () => {
    const { syntheticGenerator } = await import('@rlvr/rollout');
    const rows = syntheticGenerator({ minSteps: 1, maxSteps: 2, digits: 1 })
      .tasks('own-data', 20)
      .map((t, i) => ({ id: i, problem: t.question, solution: t.answer }));
    const file = join(root, 'own.jsonl');
    await writeFile(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const config = join(root, 'own.json');
    await writeFile(
      config,
      JSON.stringify({
        ...MICRO,
        steps: 2,
        eval: { ...MICRO.eval, every: 0, problems: 5 },
        data: { train: file, format: { question: 'problem', answer: 'solution', id: 'id' } },
      }),
    );
    const out = join(root, 'own');
    const r = await rlvr('train', '--config', config, '--out', out, '--json');
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { evals: { problems: number }[] };
    expect(summary.evals.map((e) => e.problems)).toEqual([5, 5]);
    const run = await readRunDir(out);
    expect(run.metrics.map((m) => m.step)).toEqual([0, 1, 2]);
    // 2 steps x 2 prompts drawn from the 15 training rows, never from the 5 held out
    const trained = new Set(run.samples!.map((s) => s.prompt));
    const all = new Set(rows.map((r) => r.problem));
    for (const q of trained) expect(all.has(q)).toBe(true);
  });

  /** Each case: the arguments (files under root written on demand), the exit code, the one line (or the first, then one naming --help). */
  const failures: [string, () => Promise<string[]>, number, () => RegExp][] = [
    [
      'a 50 MB question: refused untokenized, file and line named',
      async () => [
        '--config',
        // rows enough for MICRO's prompts and held-out set: the refusal is the only line
        await dataConfig(
          'huge',
          `{"problem":"1+1?","solution":"2"}\n{"problem":"${'x'.repeat(50_000_000)}","solution":"1"}\n${'{"problem":"2+2?","solution":"4"}\n'.repeat(4)}`,
        ),
      ],
      1,
      () =>
        new RegExp(
          `^rlvr train: ${join(root, 'huge.jsonl')}:2: question is 50,000,000 characters, too long for the policy's context of 256 tokens \\(at most 8,192 characters\\)\\n$`,
        ),
    ],
    [
      'a question whose prompt fits no context',
      async () => [
        '--config',
        await dataConfig(
          'long',
          `{"problem":"1+1?","solution":"2"}\n{"problem":"1+1?","solution":"2"}\n{"problem":"${'one two '.repeat(300)}","solution":"1"}\n`,
        ),
      ],
      1,
      () =>
        new RegExp(
          `^rlvr train: ${join(root, 'long.jsonl')}:3: question: its prompt is \\d+ tokens; with (rollout|eval)\\.maxNewTokens 24 it exceeds the policy's context of 256 tokens \\(max_position_embeddings\\)\\n$`,
        ),
    ],
    [
      'an unknown dotted path',
      async () => ['--config', cfg, '--trainer.lrr', '1'],
      2,
      () =>
        /^rlvr train: --trainer\.lrr: unknown option: trainer has no key "lrr" \(keys: clipLow, .*schedule, seed\)\n\(rlvr train --help lists the options\)\n$/,
    ],
    [
      'a dotted value of the wrong type',
      async () => ['--config', cfg, '--trainer.schedule.lr', 'fast'],
      2,
      () =>
        /^rlvr train: --trainer\.schedule\.lr: Invalid input: expected number, received string \(got "fast"\)\n\(rlvr train --help lists the options\)\n$/,
    ],
    [
      'options of the estimator name',
      async () => ['--config', cfg, '--estimator.wMin', '0.3'],
      2,
      () =>
        /^rlvr train: --estimator\.wMin: unknown option: estimator takes a value, not options \(the estimator's options are --estimatorConfig\.KEY\)\n\(rlvr train --help lists the options\)\n$/,
    ],
    [
      'an unknown estimator option',
      async () => ['--config', cfg, '--estimatorConfig.wMinn', '0.3'],
      1,
      () => /^rlvr train: field estimatorConfig: invalid estimator grail configuration: .*wMinn.*\n$/,
    ],
    [
      'a bad config file',
      async () => ['--config', await writeJson('bad', { ...MICRO, stepz: 3, rollout: { prompts: 0 } })],
      1,
      () => /^rlvr train: .*bad\.json: invalid train config: (?=.*unknown key: stepz)(?=.*rollout\.prompts: Too small).*\n$/,
    ],
    [
      "another command's config.json",
      async () => ['--config', await writeJson('pretrain-run', { command: 'pretrain', steps: 3 })],
      1,
      () => /^rlvr train: .*pretrain-run\.json, field command: invalid train config: written by rlvr "pretrain", not rlvr train\n$/,
    ],
    [
      'an unknown saliency.refresh',
      async () => ['--config', cfg, '--saliency.refresh', 'sometimes'],
      1,
      () => /^rlvr train: field saliency\.refresh: must be one of "batch", "epoch", "minibatch", got "sometimes"\n$/,
    ],
    ['an unknown estimator', async () => ['--config', cfg, '--estimator', 'grpo+nope'], 1, () => /^rlvr train: .*estimator: .*nope.*\n$/],
    [
      'a missing checkpoint',
      async () => ['--config', cfg, '--checkpoint', join(root, 'no-such-model')],
      1,
      () => new RegExp(`^rlvr train: .*checkpoint ${join(root, 'no-such-model')} not found \\(no config.json there\\)\\n$`),
    ],
    [
      'a missing plugin',
      async () => ['--config', cfg, '--plugin', join(root, 'missing.mjs')],
      1,
      () => /^rlvr train: .*plugin not found: .*missing\.mjs\n$/,
    ],
    [
      'a missing data file',
      async () => ['--config', await writeJson('data-missing', { ...MICRO, data: { train: join(root, 'no-such.jsonl') } })],
      1,
      () => /^rlvr train: field data\.train: .*no-such\.jsonl: cannot read: no such file\n$/,
    ],
    [
      'a missing config file',
      async () => ['--config', join(root, 'nope.json')],
      1,
      () => /^rlvr train: .*nope\.json: cannot read config: no such file\n$/,
    ],
    [
      'a bad flag value',
      async () => ['--config', cfg, '--steps', 'ten'],
      2,
      () => /^rlvr train: --steps: must be an integer >= 1 \(got "ten"\)\n\(rlvr train --help lists the options\)\n$/,
    ],
    [
      'a mistyped flag',
      async () => ['--config', cfg, '--stpes', '2'],
      2,
      () => /^rlvr train: Unknown option '--stpes' \(did you mean --steps\?\)\n\(rlvr train --help lists the options\)\n$/,
    ],
    [
      'a checkpoint whose weights are cut short (found after the backend starts)',
      async () => {
        const dir = join(root, 'cut-weights');
        await cp(join(CLI, '..', '..', 'assets', 'warmup'), dir, { recursive: true, filter: (f) => !f.endsWith('/run') });
        await writeFile(join(dir, 'model.safetensors'), (await readFile(join(dir, 'model.safetensors'))).subarray(0, 5000));
        return ['--config', cfg, '--checkpoint', dir];
      },
      1,
      // one line: the tfjs backend's line waits for the policy's and is not printed
      () => new RegExp(`^rlvr train: ${join(root, 'cut-weights')}, field checkpoint: cannot load the checkpoint: .*\\n$`),
    ],
    [
      'a mistyped key in a config file',
      async () => ['--config', await writeJson('typo', { ...MICRO, rollout: { ...MICRO.rollout, groupsize: 4 } })],
      1,
      () => /^rlvr train: .*typo\.json: invalid train config: unknown key in rollout: groupsize \(did you mean groupSize\?\)\n$/,
    ],
  ];
  test.each(failures)('%s: non-zero exit, the problem named, nothing written', async (_what, args, code, message) => {
    const out = join(root, 'never');
    const r = await rlvr('train', ...(await args()), '--out', out);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message());
    expect(r.stdout).toBe('');
    expect(existsSync(out)).toBe(false);
  });

  test('a write failing mid-run names its file; an output path under a file is refused before any work', async () => {
    const blocked = join(root, 'blocked');
    await mkdir(blocked);
    await writeFile(join(blocked, 'checkpoints'), 'x');
    const w = await rlvr('train', '--config', cfg, '--steps', '1', '--out', blocked, '-q');
    expect(w.code).toBe(1);
    expect(w.stderr).toMatch(new RegExp(`^rlvr train: ${join(blocked, 'checkpoints')}: cannot save the checkpoint of step 1: .*\\n$`));
    const file = join(root, 'a-file');
    await writeFile(file, 'x');
    const r = await rlvr('train', '--config', cfg, '--out', join(file, 'run'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^rlvr train: .*cannot create the output directory .*a-file\/run: a path component is a file, not a directory\n$/,
    );
  });

  // node's recursive mkdir never settled on /proc/x; the run hung with its 2 policy workers
  test.runIf(existsSync('/proc/self'))(
    'an output directory the file system refuses (/proc/x), with 2 workers: exit 1, one line naming it',
    async () => {
      const r = await rlvr('train', '--config', cfg, '--out', '/proc/rlvr-x', '--steps', '1', '--workers', '2', '-q');
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^rlvr train: \/proc\/rlvr-x: cannot create the output directory \/proc\/rlvr-x: .*\n$/);
    },
    120_000,
  );

  test.each(['SIGTERM', 'SIGINT'] as const)(
    '%s before the first step (start-up, the step-0 evaluation) ends the run and its 2 workers at once: exit 130',
    async (sig) => {
      const out = join(root, sig);
      const child = spawn(process.execPath, [CLI, 'train', '--config', cfg, '--out', out, '--workers', '2'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      const code = await new Promise<number | null>((resolve) => {
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          // the workers are up: the policy line comes after they start, before the step-0 evaluation
          if (stderr.includes('2 policy workers') && !child.killed) child.kill(sig);
        });
        child.on('close', resolve);
      });
      expect(code, stderr).toBe(130);
      expect(stderr).toMatch(/rlvr train: interrupted\n$/);
      expect(stderr).not.toContain('stopping after this step');
      expect(existsSync(join(out, 'metrics.jsonl')) && (await readFile(join(out, 'metrics.jsonl'), 'utf8')).includes('"step":1')).toBe(
        false,
      );
    },
    120_000,
  );
});
