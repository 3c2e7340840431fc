import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readRunDir } from '@rlvr/report';
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

/** Metrics without the wall-clock columns, which differ from run to run. */
const untimed = async (dir: string) => (await readRunDir(dir)).metrics.map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/') && k !== 'tokens_per_s')));

describe('rlvr train', () => {
  test('a micro run writes metrics, samples, checkpoints and a loadable model; a report renders from it', async () => {
    const out = join(root, 'full');
    const r = await rlvr('train', '--config', cfg, '--out', out, '--json');
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { steps: number; evals: { step: number; accuracy: number; passAtN: number; n: number; problems: number }[]; resumedFrom: number; estimator: string };
    expect(summary).toMatchObject({ steps: 4, resumedFrom: 0, estimator: 'grail' });
    expect(summary.evals.map((e) => e.step)).toEqual([0, 2, 4]);
    for (const e of summary.evals) {
      expect(e).toMatchObject({ n: 2, problems: 6 });
      // mean accuracy over n samples is a multiple of 1 / (problems * n); pass@n >= mean accuracy
      expect(Number.isInteger(Math.round(e.accuracy * 12 * 1e6) / 1e6)).toBe(true);
      expect(e.passAtN).toBeGreaterThanOrEqual(e.accuracy);
    }
    const evalLines = (await readFile(join(out, 'evals.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { step: number; correct: number[]; accuracy: number });
    expect(evalLines.map((e) => e.step)).toEqual([0, 2, 4]);
    for (const e of evalLines) {
      expect(e.correct).toHaveLength(6);
      expect(e.accuracy).toBeCloseTo(e.correct.reduce((a, c) => a + c, 0) / 12, 12);
    }
    expect(r.stderr).toContain('rlvr train: eval step 0: accuracy ');
    expect(r.stderr).toMatch(/rlvr train: \[#+\] 4\/4 {2}reward \d\.\d\d {2}acc \d+\.\d%/);

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
    expect(Object.keys(m1!)).toEqual(expect.arrayContaining(['weights/correct/mean', 'weights/wrong/mean', 'weights/all/max', 'loss/policy', 'kl/approx', 'entropy', 'clip/low_frac']));
    expect(run.metrics[2]!.accuracy).toBe(summary.evals[1]!.accuracy);
    expect(run.metrics[3]!.accuracy).toBeUndefined();

    // samples of steps 1, 2 and 4, with one weight per token and spans inside the completion
    expect([...new Set(run.samples!.map((s) => s.step))]).toEqual([1, 2, 4]);
    for (const s of run.samples!) {
      expect(s.tokens.length).toBeGreaterThan(0);
      expect(s.correct).toBe(s.reward > 0);
      if (s.spans) expect(s.weights.slice(s.spans.content[0], s.spans.content[1]).every((w) => w === 5 || s.advantage === 0)).toBe(true);
    }

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
  });

  test('resume continues from the latest checkpoint and reproduces the uninterrupted run', async () => {
    const full = join(root, 'full');
    const out = join(root, 'resumed');
    const first = await rlvr('train', '--config', cfg, '--out', out, '--steps', '2', '-q');
    expect(first.code, first.stderr).toBe(0);
    // A fresh run never writes over a run directory.
    const again = await rlvr('train', '--config', cfg, '--out', out, '--steps', '2');
    expect(again).toMatchObject({ code: 2, stderr: `rlvr train: ${out}: ${join(out, 'metrics.jsonl')} exists: pick another --out or pass --resume (a run directory is never overwritten)\n` });
    const rest = await rlvr('train', '--config', cfg, '--out', out, '--resume');
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.stderr).toContain(`resumed from ${join(out, 'checkpoints', 'step-000002')} (step 2)`);
    expect(await untimed(out)).toEqual(await untimed(full));
    expect(await readFile(join(out, 'evals.jsonl'), 'utf8')).toBe(await readFile(join(full, 'evals.jsonl'), 'utf8'));
    const weights = (d: string) => readFile(join(d, 'model', 'model.safetensors'));
    expect((await weights(out)).equals(await weights(full))).toBe(true);
    // a changed trajectory setting cannot resume: the differing field is named
    const other = join(root, 'lr.json');
    await writeFile(other, JSON.stringify({ ...MICRO, steps: 6, trainer: { schedule: { lr: 1e-3 } } }));
    const bad = await rlvr('train', '--config', other, '--out', out, '--resume');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(`rlvr train: cannot resume: ${join(out, 'checkpoints', 'step-000004')} was written with a different config; differing fields: trainer.schedule.lr\n`);
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
    const grpo = await rlvr('train', '--config', cfg, '--out', join(root, 'grpo'), '--steps', '1', '--estimator', 'grpo', '-q');
    expect(grpo.code, grpo.stderr).toBe(0);
    const r = await rlvr('train', '--config', cfg, '--out', join(root, 'halved'), '--steps', '1', '--estimator', 'grpo+halved', '--plugin', plugin, '-q');
    expect(r.code, r.stderr).toBe(0);
    const [, g] = (await readRunDir(join(root, 'grpo'))).metrics;
    const [, h] = (await readRunDir(join(root, 'halved'))).metrics;
    expect(h!['weights/all/mean']).toBe(0.5);
    expect(h!['reward/mean']).toBe(g!['reward/mean']);
    expect(h!['adv/advantage_abs_mean']).toBeCloseTo(g!['adv/advantage_abs_mean']! / 2, 6);
  });

  test('your own dataset: problems from a JSONL file, some held out for evaluation and never trained on', async () => {
    const { syntheticGenerator } = await import('@rlvr/rollout');
    const rows = syntheticGenerator({ minSteps: 1, maxSteps: 2, digits: 1 }).tasks('own-data', 20).map((t, i) => ({ id: i, problem: t.question, solution: t.answer }));
    const file = join(root, 'own.jsonl');
    await writeFile(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const config = join(root, 'own.json');
    await writeFile(config, JSON.stringify({ ...MICRO, steps: 2, eval: { ...MICRO.eval, every: 0, problems: 5 }, data: { train: file, format: { question: 'problem', answer: 'solution', id: 'id' } } }));
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

  test('bad config, unknown estimator, missing checkpoint, unwritable output: one line, non-zero exit, nothing written', async () => {
    const out = join(root, 'never');
    const bad = join(root, 'bad.json');
    await writeFile(bad, JSON.stringify({ ...MICRO, stepz: 3, rollout: { prompts: 0 } }));
    const dataMissing = join(root, 'data-missing.json');
    await writeFile(dataMissing, JSON.stringify({ ...MICRO, data: { train: join(root, 'no-such.jsonl') } }));
    const cases: [string[], number, RegExp][] = [
      [['--config', bad], 2, /^rlvr train: .*bad\.json: invalid train config: (?=.*unknown key: stepz)(?=.*rollout\.prompts: Too small).*\n$/],
      [['--config', cfg, '--estimator', 'grpo+nope'], 2, /^rlvr train: .*estimator: .*nope.*\n$/],
      [['--config', cfg, '--checkpoint', join(root, 'no-such-model')], 1, new RegExp(`^rlvr train: .*checkpoint ${join(root, 'no-such-model')} not found \\(no config.json there\\)\\n$`)],
      [['--config', cfg, '--plugin', join(root, 'missing.mjs')], 1, /^rlvr train: .*plugin not found: .*missing\.mjs\n$/],
      [['--config', dataMissing], 1, /^rlvr train: field data\.train: .*no-such\.jsonl: cannot read: ENOENT.*\n$/],
      [['--config', join(root, 'nope.json')], 1, /^rlvr train: .*nope\.json: cannot read config: no such file\n$/],
      [['--config', cfg, '--steps', 'ten'], 2, /^rlvr train: --steps must be a non-negative integer, got "ten"\n$/],
    ];
    for (const [args, code, message] of cases) {
      const r = await rlvr('train', ...args, '--out', out);
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stdout).toBe('');
      expect(existsSync(out), args.join(' ')).toBe(false);
    }
    const file = join(root, 'a-file');
    await writeFile(file, 'x');
    const r = await rlvr('train', '--config', cfg, '--out', join(file, 'run'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^rlvr train: .*cannot create the output directory .*a-file\/run: a path component is a file, not a directory\n$/);
  });
});
