import { meanPassAtK } from './pass-at-k.js';

/** One graded sample. */
export interface SampleOutcome {
  /** `mathReward(text, gold).reward > 0` */
  correct: boolean;
  /** cut by the token limit (finish `length`) */
  truncated: boolean;
  /** a final answer (last `\boxed{}`) was found */
  answered: boolean;
}

/** The metrics of a set of problems (a dataset, or an average over datasets). */
export interface EvalMetrics {
  problems: number;
  /** samples per problem */
  n: number;
  /** mean over problems of correct / n ("acc@n", "mean accuracy") */
  accuracy: number;
  /** unbiased pass@1 (equal to `accuracy` by construction: the estimator at k = 1 is c / n) */
  passAt1: number;
  /** unbiased pass@n: the fraction of problems with at least one correct sample */
  passAtN: number;
  /** mean completion length in tokens, over samples */
  meanTokens: number;
  /** fraction of samples cut by the token limit */
  truncated: number;
  /** fraction of samples without a final answer (the reference's null_count / samples) */
  noAnswer: number;
}

/** A dataset's metrics and its per-problem correct counts. */
export interface DatasetScore extends EvalMetrics {
  /** [problems] correct samples of each problem, in file order */
  correct: number[];
}

/**
 * Score `outcomes[p][j]` (problem p, sample j, exactly n per problem); `tokens[p]` is the length of
 * problem p's n completions together, in tokens (EOS included when the sampler returns it): a
 * server that returns text reports tokens per request, not per completion.
 */
export function scoreDataset(outcomes: readonly (readonly SampleOutcome[])[], n: number, tokens: readonly number[]): DatasetScore {
  if (outcomes.length === 0) throw new RangeError('scoreDataset: no problems');
  if (tokens.length !== outcomes.length)
    throw new RangeError(`scoreDataset: ${tokens.length} token counts for ${outcomes.length} problems`);
  const correct: number[] = [];
  let truncated = 0;
  let unanswered = 0;
  outcomes.forEach((samples, p) => {
    if (samples.length !== n) throw new RangeError(`scoreDataset: problem ${p} has ${samples.length} samples, expected n=${n}`);
    let c = 0;
    for (const s of samples) {
      if (s.correct) c++;
      if (s.truncated) truncated++;
      if (!s.answered) unanswered++;
    }
    correct.push(c);
  });
  const P = outcomes.length;
  const samples = P * n;
  return {
    problems: P,
    n,
    accuracy: correct.reduce((a, c) => a + c / n, 0) / P,
    passAt1: meanPassAtK(correct, n, 1),
    passAtN: meanPassAtK(correct, n, n),
    meanTokens: tokens.reduce((a, t) => a + t, 0) / samples,
    truncated: truncated / samples,
    noAnswer: unanswered / samples,
    correct,
  };
}

const RATE_KEYS = ['accuracy', 'passAt1', 'passAtN', 'meanTokens', 'truncated', 'noAnswer'] as const;

/**
 * Average dataset metrics the two ways the reference reports them: `mean`, the plain mean over
 * datasets (each benchmark counts once); `weighted`, weighted by problems (the same as pooling
 * every problem; n is the same for all datasets). `problems` is the total either way.
 */
export function averageScores(scores: readonly EvalMetrics[], how: 'mean' | 'weighted'): EvalMetrics {
  if (scores.length === 0) throw new RangeError('averageScores: no datasets');
  const n = scores[0]!.n;
  if (scores.some((s) => s.n !== n)) throw new RangeError('averageScores: datasets sampled with different n');
  const problems = scores.reduce((a, s) => a + s.problems, 0);
  const out = { problems, n } as EvalMetrics;
  for (const k of RATE_KEYS) {
    out[k] =
      how === 'mean' ? scores.reduce((a, s) => a + s[k], 0) / scores.length : scores.reduce((a, s) => a + s[k] * s.problems, 0) / problems;
  }
  return out;
}
