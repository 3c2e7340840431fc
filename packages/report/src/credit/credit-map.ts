/**
 * A method's credit map: how it spreads a rollout's outcome over the rollout's tokens, on a scale that
 * compares across methods and rollouts. Shapes: B rollouts, T tokens (all completions, concatenated).
 */
import { ReportError } from '../errors.js';

/** One method's credit over a batch: what `creditMetrics` reads per method. */
export interface MethodCredit {
  /** the method's name (a row of every table) */
  name: string;
  /** [T] the credit of every token, rollouts concatenated in the input's order */
  credit: Float32Array;
  /** [T] |advantage| of every token: the mass the update really moves */
  absAdvantage: Float32Array;
  /** [B] 1 where the rollout's sequence advantage is 0 and `credit` is the advantage over its mean magnitude */
  degenerate: Uint8Array;
}

/** What `creditMap` reads: an estimator's output (`AdvantageResult` of `@rlvr/advantages`, or any method's). */
export interface CreditMapInput {
  /** [T] per-token advantages */
  advantages: Float32Array;
  /**
   * [B] the sequence advantage of each rollout: the baseline's (`AdvantageResult.sequenceAdvantages` of a composed
   * estimator). A method that reports none gets its rollout's mean advantage from `defineMethod`; pass its
   * baseline's instead (VeriGate: GRPO's, which is 0 in the degenerate groups it rewrites).
   */
  sequenceAdvantages: ArrayLike<number>;
  /**
   * [T] the method's own token weights, where it has them (a composed estimator's weighting: GRAIL, OAR-G,
   * uniform). Leave out for a method that changes the advantages and passes its base's weights through
   * (entropy shaping, GAR): its credit is then its advantage over the sequence advantage.
   */
  weights?: Float32Array;
  /** [B + 1] token offsets of each rollout (a batch's `completionOffsets`) */
  offsets: Int32Array;
  /**
   * [B] the verifier's verdicts: where the sequence advantage is 0, a wrong rollout's advantage is divided by
   * minus its mean magnitude, so that blame is positive credit there too, as it is over a negative sequence advantage
   */
  correct: ArrayLike<boolean>;
}

/**
 * The credit map of one method (issue 39): the weight where the method has one; otherwise the advantage over
 * the rollout's sequence advantage; where that is 0, the advantage over its mean magnitude in the rollout (with
 * the outcome's sign: minus for a wrong rollout), flagged `degenerate` (all zero when every advantage is 0).
 * Float64 arithmetic, rounded once to float32.
 */
export function creditMap(name: string, input: CreditMapInput): MethodCredit {
  const { advantages, sequenceAdvantages, weights, offsets, correct } = input;
  const B = offsets.length - 1;
  const T = offsets[B]!;
  if (advantages.length !== T)
    throw new ReportError(
      'invalid_input',
      `method ${name}: advantages has ${advantages.length} entries but the offsets cover ${T} tokens`,
      {
        field: 'advantages',
      },
    );
  if (sequenceAdvantages.length !== B)
    throw new ReportError(
      'invalid_input',
      `method ${name}: sequenceAdvantages has ${sequenceAdvantages.length} entries but there are ${B} rollouts`,
      { field: 'sequenceAdvantages' },
    );
  if (correct.length !== B)
    throw new ReportError('invalid_input', `method ${name}: correct has ${correct.length} entries but there are ${B} rollouts`, {
      field: 'correct',
    });
  if (weights !== undefined && weights.length !== T)
    throw new ReportError('invalid_input', `method ${name}: weights has ${weights.length} entries but the offsets cover ${T} tokens`, {
      field: 'weights',
    });
  const credit = new Float32Array(T);
  const absAdvantage = new Float32Array(T);
  const degenerate = new Uint8Array(B);
  for (let i = 0; i < B; i++) {
    const s = offsets[i]!;
    const e = offsets[i + 1]!;
    let mass = 0;
    for (let t = s; t < e; t++) {
      const a = Math.abs(advantages[t]!);
      absAdvantage[t] = a;
      mass += a;
    }
    if (weights !== undefined) {
      credit.set(weights.subarray(s, e), s);
      continue;
    }
    const seq = sequenceAdvantages[i]!;
    if (seq !== 0) {
      for (let t = s; t < e; t++) credit[t] = advantages[t]! / seq;
      continue;
    }
    degenerate[i] = 1;
    const scale = mass > 0 ? ((correct[i] ? 1 : -1) * (e - s)) / mass : 0;
    for (let t = s; t < e; t++) credit[t] = advantages[t]! * scale + 0; // + 0: no -0 in the map
  }
  return { name, credit, absAdvantage, degenerate };
}
