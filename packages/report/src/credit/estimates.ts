/**
 * From a frozen batch's estimator outputs and first-error labels to the credit report: the wiring of `creditMap`
 * (which methods pass weights, which sequence advantages a method is measured against) and of the labels, once
 * here for every caller (`rlvr credit`, a training run's evaluations). Shapes: B rollouts, T tokens.
 */
import { creditMap } from './credit-map.js';
import type { CreditLabel, CreditOptions } from './input.js';
import { creditMetrics } from './metrics.js';
import type { CreditReport } from './schema.js';

/** A token labeller's verdict (`@rlvr/tasks`' `labelTokens`, read structurally): its kind and the error line's tokens. */
export interface TokenLabel {
  kind: string;
  correctSteps: number;
  /** [start, end) of the first wrong line in the completion's tokens; null where it has none */
  tokens: readonly [number, number] | null;
}

/** One estimator's output on the batch (`AdvantageResult` of `@rlvr/advantages`) and how to read it. */
export interface EstimatorOutput {
  name: string;
  /** [T] */
  advantages: Float32Array;
  /** [T] */
  weights: Float32Array;
  /** [B] */
  sequenceAdvantages: ArrayLike<number>;
  /** a baseline composed with a token weighting (GRAIL, OAR-G, uniform): its credit is its weight */
  composed: boolean;
}

export interface EstimatesInput {
  /** [B + 1] token offsets of each rollout (`completionOffsets`) */
  offsets: Int32Array;
  /** [B] the prompt of each rollout */
  groupIndex: ArrayLike<number>;
  /** [B] the verifier's verdicts */
  correct: ArrayLike<boolean>;
  /** [B] the labeller's verdicts */
  labels: readonly TokenLabel[];
  estimates: readonly EstimatorOutput[];
  /** [B] GRPO's sequence advantages on the batch: what a method that reports none is measured against */
  baseline: ArrayLike<number>;
}

/** The labeller's verdict as a credit label: `correct`, `unlabelled` (also a wrong line without tokens), or the first error. */
export function creditLabel(l: TokenLabel): CreditLabel {
  if (l.kind === 'correct') return 'correct';
  if (l.kind === 'unlabelled' || l.tokens === null) return 'unlabelled';
  return { kind: l.kind, tokenStart: l.tokens[0], tokenEnd: l.tokens[1], correctSteps: l.correctSteps };
}

/**
 * Every estimator's credit map and metrics on the same rollouts. A composed estimator is measured by its weights;
 * any other by its advantages over its sequence advantages, except that a method reporting none (its sequence
 * advantages are exactly its rollouts' mean advantages, which `defineMethod` fills in: VeriGate) is measured
 * against `baseline`, so that its degenerate groups (GRPO's 0) are recognised.
 */
export function creditOfEstimates(input: EstimatesInput, options: CreditOptions = {}): CreditReport {
  const { offsets, correct, baseline } = input;
  const methods = input.estimates.map((e) =>
    creditMap(e.name, {
      advantages: e.advantages,
      sequenceAdvantages: !e.composed && isRolloutMean(e.advantages, e.sequenceAdvantages, offsets) ? baseline : e.sequenceAdvantages,
      ...(e.composed ? { weights: e.weights } : {}),
      offsets,
      correct,
    }),
  );
  const rollouts = input.labels.map((label, i) => ({
    index: i,
    group: input.groupIndex[i]!,
    correct: correct[i]!,
    label: creditLabel(label),
    tokens: offsets[i + 1]! - offsets[i]!,
  }));
  return creditMetrics({ rollouts, methods }, options);
}

/** Whether `sequence[i]` is the mean of rollout i's advantages for every i, summed in `defineMethod`'s order. */
function isRolloutMean(advantages: Float32Array, sequence: ArrayLike<number>, offsets: Int32Array): boolean {
  for (let i = 0; i + 1 < offsets.length; i++) {
    const [a, b] = [offsets[i]!, offsets[i + 1]!];
    let s = 0;
    for (let t = a; t < b; t++) s += advantages[t]!;
    if (sequence[i] !== (b > a ? s / (b - a) : 0)) return false;
  }
  return true;
}
