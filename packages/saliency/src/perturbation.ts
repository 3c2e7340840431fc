import { SIGNAL_NAMES, totalTokens, type RolloutBatch } from '@rlvr/core';
import type { Qwen3Model } from '@rlvr/policy';
import { z } from 'zod';
import { tf } from './tf.js';
import { defineBackend } from './backend.js';
import { modelBackendOptions, parseBackendConfig } from './config.js';
import { SaliencyError } from './errors.js';
import { answerRange, checkBatch } from './layout.js';
import { answerLogProbs } from './answer-distribution.js';
import { countMissing, type SaliencyResult } from './result.js';

/**
 * `perturbation`: score_t = KL(p0 || p_t), p_t the answer distribution with the embedding at the
 * scored position replaced. One forward pass per scored token (batched).
 */
export const PerturbationConfigSchema = z.strictObject({
  ...modelBackendOptions,
  /** The perturbation reads a token's own position by default. */
  alignment: z.enum(['own', 'previous']).default('own'),
  /** What replaces the embedding: a zero vector, or the embedding of a token id (pad or mask token). */
  replacement: z.union([z.literal('zero'), z.number().int().nonnegative()]).default('zero'),
  /**
   * Score only the last `window` tokens that can influence the answer (those closest to it);
   * earlier tokens get 0. null scores them all (T forward passes per rollout).
   */
  window: z.number().int().positive().nullable().default(null),
});
export type PerturbationConfig = z.output<typeof PerturbationConfigSchema>;
export type PerturbationConfigInput = z.input<typeof PerturbationConfigSchema>;

/**
 * Completion tokens of one rollout whose perturbation is computed: those whose scored position
 * can influence the answer under causal attention (the others' KL is exactly 0), the last
 * `window` of them when a window is set.
 * @param pl prompt length; `answer` `[a0, a1)`; returns token indices j and their positions q.
 */
export function perturbedTokens(
  pl: number,
  cl: number,
  answer: [number, number],
  cfg: Pick<PerturbationConfig, 'alignment' | 'window'>,
): { tokens: number[]; positions: number[]; length: number } {
  // The last answer token is predicted at position pl + a1 - 2: nothing after it matters.
  const length = pl + answer[1] - 1;
  const tokens: number[] = [];
  const positions: number[] = [];
  for (let j = 0; j < cl; j++) {
    const q = cfg.alignment === 'own' ? pl + j : pl - 1 + j;
    if (q < length) {
      tokens.push(j);
      positions.push(q);
    }
  }
  const from = cfg.window === null ? 0 : Math.max(0, tokens.length - cfg.window);
  return { tokens: tokens.slice(from), positions: positions.slice(from), length };
}

/** One forward pass of the perturbation backend: a rollout's sequence, clean (position -1) or with one embedding replaced. */
interface Job {
  rollout: number;
  /** index of the scored token in the completion (-1: the clean sequence) */
  token: number;
  /** scored input position (-1: none) */
  position: number;
}

/**
 * Leave-one-out scores: for each perturbed token, KL(p0 || p_t) (float64 on the host), where p0 is
 * the answer distribution (softmax of the mean answer-position logits) of the clean sequence and
 * p_t that of the sequence whose embedding at the scored position is replaced (by a zero vector or
 * a pad/mask token's embedding). Jobs of many rollouts share a forward pass: sequences cut after
 * the last answer position, left-padded to the longest in the pass, at most `tokenBudget` padded
 * tokens per pass.
 */
async function runJobs(
  model: Qwen3Model,
  batch: RolloutBatch,
  cfg: PerturbationConfig,
  answers: ([number, number] | null)[],
  out: Float32Array,
): Promise<void> {
  const { D, V } = model.dims;
  const seqOf = (i: number) => {
    const p0 = batch.promptOffsets[i]!;
    const pl = batch.promptOffsets[i + 1]! - p0;
    const c0 = batch.completionOffsets[i]!;
    const cl = batch.completionOffsets[i + 1]! - c0;
    return { pl, cl, c0, p0 };
  };
  const jobs: Job[] = [];
  const lengths = new Map<number, number>();
  for (let i = 0; i < batch.numRollouts; i++) {
    const a = answers[i];
    if (!a) continue;
    const { pl, cl } = seqOf(i);
    const { tokens, positions, length } = perturbedTokens(pl, cl, a, cfg);
    if (tokens.length === 0) continue;
    lengths.set(i, length);
    jobs.push({ rollout: i, token: -1, position: -1 });
    tokens.forEach((t, k) => jobs.push({ rollout: i, token: t, position: positions[k]! }));
  }
  const clean = new Map<number, Float32Array>(); // rollout -> log p0 [V]
  let s = 0;
  while (s < jobs.length) {
    // Take jobs while the padded pass stays within the budget (at least one).
    let e = s + 1;
    let L = lengths.get(jobs[s]!.rollout)!;
    while (e < jobs.length) {
      const l = Math.max(L, lengths.get(jobs[e]!.rollout)!);
      if ((e - s + 1) * l > cfg.tokenBudget) break;
      L = l;
      e++;
    }
    const pass = jobs.slice(s, e);
    const k = pass.length;
    const ids = new Int32Array(k * L).fill(cfg.padId);
    const attn = new Float32Array(k * L);
    const onehot = new Float32Array(k * L);
    const answerMask = new Float32Array(k * L);
    pass.forEach((job, r) => {
      const i = job.rollout;
      const { pl, cl, p0, c0 } = seqOf(i);
      const len = lengths.get(i)!;
      const pad = L - len;
      const a = answers[i]!;
      const row = r * L + pad;
      ids.set(batch.promptTokens.subarray(p0, p0 + pl), row);
      ids.set(batch.completionTokens.subarray(c0, c0 + Math.min(cl, len - pl)), row + pl);
      attn.fill(1, row, row + len);
      answerMask.fill(1, row + pl - 1 + a[0], row + pl - 1 + a[1]);
      if (job.position >= 0) onehot[row + job.position] = 1;
    });
    const logPt = tf.tidy(() => {
      const idsT = tf.tensor2d(ids, [k, L], 'int32');
      const M = tf.tensor3d(onehot, [k, L, 1]);
      const replacement = cfg.replacement === 'zero' ? tf.zeros([1, 1, D]) : model.embed(tf.tensor2d([cfg.replacement], [1, 1], 'int32'));
      // e' = e (1 - M) + r M: the embedding at the scored position replaced, the rest unchanged.
      const x = tf.add(tf.mul(model.embed(idsT), tf.sub(1, M)), tf.mul(replacement, M)) as tf.Tensor3D; // [k, L, D]
      const h = model.hidden({ embeds: x, attentionMask: tf.tensor2d(attn, [k, L]) });
      return answerLogProbs(model, h, tf.tensor2d(answerMask, [k, L]), cfg.temperature); // [k, V]
    });
    // Asynchronous read: the webgpu backend has no synchronous read in Node.
    const logP = (await logPt.data()) as Float32Array;
    logPt.dispose();
    pass.forEach((job, r) => {
      const lp = logP.subarray(r * V, (r + 1) * V);
      if (job.token < 0) {
        clean.set(job.rollout, lp.slice());
        return;
      }
      const lp0 = clean.get(job.rollout)!;
      let kl = 0;
      for (let v = 0; v < V; v++) {
        const p0 = Math.exp(lp0[v]!);
        kl += p0 * (Math.log(p0 + 1e-12) - lp[v]!);
      }
      out[batch.completionOffsets[job.rollout]! + job.token] = Math.max(0, kl);
    });
    // A rollout's clean distribution is no longer needed once its last job has run.
    for (const i of [...clean.keys()]) if (i !== jobs[e - 1]!.rollout) clean.delete(i);
    s = e;
  }
}

/**
 * Perturbation scores (`saliency.perturbation`) of a whole batch: one forward pass per perturbed
 * token (batched), a high-fidelity reference for studies and tests. Rollouts without an answer
 * span get no scores (flagged in `hasScores`, values 0).
 */
export function perturbation(model: Qwen3Model, batch: RolloutBatch, config: PerturbationConfigInput = {}): Promise<SaliencyResult> {
  return leaveOneOut(model, batch, parseBackendConfig(PerturbationConfigSchema, config, 'perturbation'));
}

async function leaveOneOut(model: Qwen3Model, batch: RolloutBatch, cfg: PerturbationConfig): Promise<SaliencyResult> {
  checkBatch(batch, model.dims.V);
  if (cfg.replacement !== 'zero' && cfg.replacement >= model.dims.V) {
    throw new SaliencyError('invalid_config', `replacement token ${cfg.replacement} is not in the vocabulary [0, ${model.dims.V})`, {
      field: 'replacement',
    });
  }
  const B = batch.numRollouts;
  const out: SaliencyResult = {
    signal: SIGNAL_NAMES.perturbation,
    scores: new Float32Array(totalTokens(batch)),
    hasScores: new Uint8Array(B),
    missing: B,
  };
  const answers: ([number, number] | null)[] = [];
  for (let i = 0; i < B; i++) {
    const a = batch.completionOffsets[i + 1]! > batch.completionOffsets[i]! ? answerRange(batch, i, cfg.answerSpan) : null;
    if (a !== null && batch.promptOffsets[i + 1] === batch.promptOffsets[i]) {
      throw new SaliencyError('invalid_input', 'prompt is empty: the first completion token needs at least one token of context', {
        rollout: i,
        field: 'prompt',
      });
    }
    answers.push(a);
    out.hasScores[i] = a === null ? 0 : 1;
  }
  await runJobs(model, batch, cfg, answers, out.scores);
  return countMissing(out);
}

/** The leave-one-out perturbation backend. */
export const perturbationBackend = defineBackend({
  name: 'perturbation',
  signal: SIGNAL_NAMES.perturbation,
  configSchema: PerturbationConfigSchema,
  onWorkers: true,
  run: leaveOneOut,
});
