/**
 * A deterministic synthetic run directory for tests: smooth metric curves with
 * seeded noise, and samples whose token weights follow a U-shape over the
 * completion (deeper for correct rollouts), with answer spans near the end.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Rng } from '@rlvr/core';
import type { CheckpointWeightRecord, EvalRecord, MetricsRecord, SampleRecord } from '../run-dir.js';

export interface SyntheticRunOptions {
  steps?: number;
  evalEvery?: number;
  sampleSteps?: number[];
  rolloutsPerStep?: number;
  seed?: number;
  /** Extra text tokens spliced into the first sample (e.g. markup that must be escaped). */
  injectTokens?: string[];
  /** Extra metric (name, value) logged on every step. */
  extraMetric?: string;
}

const WORDS = [
  ' the',
  ' sum',
  ' of',
  ' 3',
  ' and',
  ' 4',
  ' is',
  ' 7',
  '.',
  '\n',
  ' so',
  ' we',
  ' multiply',
  ' by',
  ' 2',
  ' =',
  ' 14',
  ' then',
  ' add',
];

function syntheticMetrics(opts: SyntheticRunOptions = {}): MetricsRecord[] {
  const steps = opts.steps ?? 60;
  const evalEvery = opts.evalEvery ?? 10;
  const rng = new Rng(opts.seed ?? 7);
  const out: MetricsRecord[] = [];
  for (let step = 0; step < steps; step++) {
    const p = step / Math.max(1, steps - 1);
    const r: MetricsRecord = {
      step,
      'reward/mean': 0.2 + 0.5 / (1 + Math.exp(-8 * (p - 0.5))) + 0.03 * rng.normal(),
      'reward/std': 0.35 + 0.05 * rng.float(),
      frac_reward_zero_std: 0.5 - 0.3 * p + 0.02 * rng.normal(),
      'loss/policy': -0.02 + 0.01 * rng.normal(),
      'kl/approx': 0.002 * p + 0.0005 * rng.float(),
      entropy: 1.2 - 0.4 * p + 0.02 * rng.normal(),
      'clip/low_frac': 0.01 + 0.005 * rng.float(),
      'clip/high_frac': 0.02 + 0.005 * rng.float(),
      grad_norm: 0.8 + 0.2 * rng.float(),
      lr: 1e-6 * Math.min(1, (step + 1) / 10),
      tokens_per_s: 900 + 50 * rng.normal(),
      'completions/mean_length': 60 + 10 * p,
      'weights/correct/mean': 1.05 + 0.01 * rng.normal(),
      'weights/wrong/mean': 1.02 + 0.01 * rng.normal(),
      'weights/correct/std': 0.3 + 0.02 * rng.float(),
      'weights/wrong/std': 0.2 + 0.02 * rng.float(),
      // without a KL penalty, and with one update per step, these stay 0 (the report says so in a line)
      'kl/ref': 0,
      'completions/clipped_ratio': 0,
      'custom/unknown_metric': Math.sin(step / 5),
    };
    if (step % evalEvery === 0 || step === steps - 1) r.accuracy = 0.3 + 0.25 * p + 0.01 * rng.float();
    if (opts.extraMetric !== undefined) r[opts.extraMetric] = step;
    out.push(r);
  }
  return out;
}

/** The U-shaped weight of token t in a completion of len tokens, before noise. */
function uShape(t: number, len: number, correct: boolean): number {
  const x = (2 * t) / len - 1;
  const depth = correct ? 0.9 : 0.45;
  return 1 - depth / 3 + depth * x * x;
}

function syntheticSamples(opts: SyntheticRunOptions = {}): SampleRecord[] {
  const rng = new Rng((opts.seed ?? 7) + 1);
  const out: SampleRecord[] = [];
  for (const step of opts.sampleSteps ?? [20, 40, 59]) {
    const n = opts.rolloutsPerStep ?? 16;
    for (let i = 0; i < n; i++) {
      const group = Math.floor(i / 4);
      const correct = rng.float() < 0.5;
      const len = 10 + rng.int(60);
      const tokens = Array.from({ length: len }, () => WORDS[rng.int(WORDS.length)]!);
      const hasAnswer = len >= 12 && i % 5 !== 4;
      let spans: SampleRecord['spans'] = null;
      if (hasAnswer) {
        tokens[len - 6] = ' \\boxed{';
        tokens[len - 5] = '1';
        tokens[len - 4] = '4';
        tokens[len - 3] = '}';
        tokens[len - 2] = '.';
        tokens[len - 1] = '<|im_end|>';
        spans = { open: [len - 6, len - 5], content: [len - 5, len - 3], close: [len - 3, len - 2] };
      }
      const weights = tokens.map((_, t) => uShape(t, len, correct) + 0.05 * rng.normal());
      out.push({
        step,
        group,
        reward: correct ? 1 : 0,
        correct,
        advantage: correct ? 0.8 : -0.8,
        prompt: `Compute 3 + 4, then multiply by 2 & write <b>the</b> answer. (#${i})`,
        tokens,
        weights,
        spans,
      });
    }
  }
  if (opts.injectTokens !== undefined && out.length > 0) {
    // The first sample of the last step: the report's heatmaps always show it.
    const s = out[out.length - (opts.rolloutsPerStep ?? 16)]!;
    // Prepend, so spans shift by the number of injected tokens.
    const k = opts.injectTokens.length;
    s.tokens = [...opts.injectTokens, ...s.tokens];
    s.weights = [...opts.injectTokens.map(() => 1.5), ...s.weights];
    if (s.spans !== null) {
      const sh = (r: [number, number]): [number, number] => [r[0] + k, r[1] + k];
      s.spans = { open: sh(s.spans.open), content: sh(s.spans.content), close: sh(s.spans.close) };
    }
  }
  return out;
}

/**
 * Held-out evaluations on the eval steps of `metrics` (`evals.jsonl`): 20 problems, n = 4, greedy
 * too; problem p is solved more often as training goes on. Their accuracies replace the metrics'.
 */
function syntheticEvals(metrics: MetricsRecord[], seed = 7): EvalRecord[] {
  const rng = new Rng(seed + 2);
  const P = 20;
  const n = 4;
  const out: EvalRecord[] = [];
  for (const m of metrics) {
    if (m.accuracy === undefined) continue;
    const p = m.step / Math.max(1, metrics.at(-1)!.step);
    const correct = Array.from({ length: P }, (_, i) =>
      Math.min(n, Math.max(0, Math.round(n * (0.25 + 0.4 * p + 0.3 * Math.sin(i)) + rng.normal()))),
    );
    const greedyCorrect: number[] = correct.map((c) => (c >= n / 2 ? 1 : 0));
    const e: EvalRecord = {
      step: m.step,
      accuracy: correct.reduce((a, c) => a + c / n, 0) / P,
      passAtN: correct.filter((c) => c > 0).length / P,
      n,
      problems: P,
      correct,
      greedyAccuracy: greedyCorrect.reduce((a, c) => a + c, 0) / P,
      greedyCorrect,
    };
    m.accuracy = e.accuracy;
    m['pass@4'] = e.passAtN;
    m['accuracy/greedy'] = e.greedyAccuracy!;
    out.push(e);
  }
  return out;
}

/**
 * `checkpoint-weights.jsonl` of the eval steps of `metrics`: 6 fixed rollouts, each with R reasoning
 * tokens whose weight is a U-shape in t / (R - 1) that deepens with the step, then a box (content
 * 5, delimiters 1) and post-answer tokens (1); rollout 5 has no box.
 */
export function syntheticCheckpointWeights(metrics: MetricsRecord[]): CheckpointWeightRecord[] {
  const steps = metrics.filter((m) => m.accuracy !== undefined).map((m) => m.step);
  const last = Math.max(1, steps.at(-1) ?? 1);
  return steps.flatMap((step) =>
    Array.from({ length: 6 }, (_, rollout): CheckpointWeightRecord => {
      const R = 8 + 3 * rollout;
      const depth = 0.2 + (0.6 * step) / last;
      const reasoning = Array.from({ length: R }, (_, t) => 1 - depth / 2 + depth * ((2 * t) / (R - 1) - 1) ** 2);
      if (rollout === 5)
        return {
          step,
          rollout,
          correct: false,
          tokens: Array.from({ length: R }, (_, t) => WORDS[t % WORDS.length]!),
          weights: reasoning.map(() => 1),
          spans: null,
          reasoning: null,
        };
      const tokens = [...Array.from({ length: R }, (_, t) => WORDS[t % WORDS.length]!), ' \\boxed{', '1', '4', '}', '.', '<|im_end|>'];
      return {
        step,
        rollout,
        correct: rollout % 2 === 0,
        tokens,
        weights: [...reasoning, 1, 5, 5, 1, 1, 1],
        spans: { open: [R, R + 1], content: [R + 1, R + 3], close: [R + 3, R + 4] },
        reasoning: R,
      };
    }),
  );
}

/** Write a run directory with config, metrics, samples, evals and checkpoint weights; returns its path. */
export async function writeSyntheticRun(
  dir: string,
  opts: SyntheticRunOptions = {},
): Promise<{ dir: string; metrics: MetricsRecord[]; samples: SampleRecord[]; evals: EvalRecord[] }> {
  await mkdir(dir, { recursive: true });
  const metrics = syntheticMetrics(opts);
  const evals = syntheticEvals(metrics, opts.seed);
  const samples = syntheticSamples(opts);
  const config = {
    estimator: { name: 'grail', w_min: 0.5, w_max: 2 },
    steps: opts.steps ?? 60,
    seed: opts.seed ?? 7,
    note: '</pre><script>alert(1)</script>',
  };
  await writeFile(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  await writeFile(join(dir, 'metrics.jsonl'), metrics.map((m) => JSON.stringify(m)).join('\n') + '\n');
  await writeFile(join(dir, 'samples.jsonl'), samples.map((s) => JSON.stringify(s)).join('\n') + '\n');
  await writeFile(join(dir, 'evals.jsonl'), evals.map((e) => JSON.stringify(e)).join('\n') + '\n');
  await writeFile(
    join(dir, 'checkpoint-weights.jsonl'),
    syntheticCheckpointWeights(metrics)
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  return { dir, metrics, samples, evals };
}
