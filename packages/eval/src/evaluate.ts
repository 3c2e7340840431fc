/**
 * The one held-out evaluator of rlvr: `n` samples per problem from any `Sampler` (the in-process
 * policy, an OpenAI-compatible server), each graded by `mathReward` against the gold answer, and
 * optionally one greedy completion per problem. `rlvr eval`, `rlvr train`'s held-out evaluation
 * and `rlvr pretrain`'s greedy evaluation are this function with different prompts and seeds.
 *
 * The sampler is called on consecutive chunks of `chunk` problems in order (all at once by
 * default), the greedy pass after the sampled one: a caller that keeps its seeds and chunking gets
 * the same samples, since a sampler's rows depend on their request seed and on the batch they
 * are decoded in.
 */
import type { ErrorLocation } from '@rlvr/core';
import { mathReward } from '@rlvr/math-verify';
import type { PromptSamples, SampledCompletion, SamplePrompt, Sampler, SamplingParams } from '@rlvr/rollout';
import type { Chain } from '@rlvr/tasks';
import { EvaluationError } from './errors.js';
import { scoreDataset } from './score.js';
import { stepQuality } from './step-quality.js';
import type { StepQuality, StepQualitySample } from './step-quality.js';
import type { DatasetScore, SampleOutcome } from './score.js';

/** One problem: what to sample from, what to grade against, and the seed of its samples. */
export interface EvalProblem {
  prompt: SamplePrompt;
  /** the gold answer */
  answer: string;
  /** seeds this problem's sampled completions (the greedy one needs none) */
  seed: number;
  /** where the problem comes from (a dataset's file and line), for error messages */
  location?: ErrorLocation;
  /** the question: the reward reads what it asks (unit, rounding, options), and `examples` show it */
  question?: string;
  /** the problem's exact chain (the synthetic tasks): its samples count in `stepQuality` */
  chain?: Chain;
}

export interface EvaluateOptions {
  /** samples per problem */
  n: number;
  temperature: number;
  /** nucleus mass; ignored (1) when greedy */
  topP: number;
  /** 0 = off; ignored when greedy */
  topK: number;
  maxNewTokens: number;
  /** also decode each problem once at temperature 0 */
  greedy?: boolean;
  /** problems per sampler call (default: all): the granularity of `onProgress` */
  chunk?: number;
  /** the first completions to return as text, for a look */
  examples?: number;
  /** the completion text when the sampler returns none (a local sampler: decode without EOS) */
  text?: (tokens: readonly number[]) => string;
  /** what is sampled from, for error messages (default: the sampler's name) */
  source?: string;
  /** after each chunk of the sampled pass: problems done so far */
  onProgress?: (done: number) => void;
  signal?: AbortSignal;
}

/**
 * The scores of an evaluation (`scoreDataset` of the sampled completions: accuracy, pass@1,
 * pass@n, mean tokens, truncated and unanswered fractions, per-problem correct counts), with
 * the greedy pass and a few examples.
 */
export interface EvaluateResult extends DatasetScore {
  /** fraction of samples that ended on their own (finish `stop`) */
  finished: number;
  /** [problems] 1 where the greedy completion is correct (with `greedy`) */
  greedyCorrect?: number[];
  /** greedy accuracy (with `greedy`) */
  greedyAccuracy?: number;
  /** the first `examples` sampled completions */
  examples: { question: string; answer: string; completion: string; correct: boolean }[];
  /** the Step-Quality metrics of the sampled completions of the problems with a chain (none: absent) */
  stepQuality?: StepQuality;
}

/** A failure a sampler reports for request `request` of a call (thrown by samplers that stop at the first failure). */
export class SampleFailure extends Error {
  constructor(
    readonly request: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** Grade `problems` by sampling from `sampler`. Throws `EvaluationError('sampling_failed')` at the first failed sample, naming its problem. */
export async function evaluateProblems(sampler: Sampler, problems: readonly EvalProblem[], o: EvaluateOptions): Promise<EvaluateResult> {
  if (problems.length === 0) throw new RangeError('evaluateProblems: no problems');
  const greedy = o.temperature === 0;
  const params = (p: EvalProblem, temperature: number): SamplingParams => ({
    temperature,
    topP: temperature === 0 ? 1 : o.topP,
    topK: temperature === 0 ? 0 : o.topK,
    maxNewTokens: o.maxNewTokens,
    stop: [],
    seed: p.seed,
  });
  const textOf = (c: SampledCompletion): string => c.text ?? o.text?.(c.tokens) ?? '';
  const chunk = o.chunk ?? problems.length;

  /** `each(problem, samples, tokens)`: `tokens` = the samples' tokens together (the sampler's count when it returns text only) */
  const pass = async (
    n: number,
    temperature: number,
    each: (p: number, samples: readonly SampledCompletion[], tokens: number) => void,
    progress?: (done: number) => void,
  ): Promise<void> => {
    for (let s = 0; s < problems.length; s += chunk) {
      const part = problems.slice(s, s + chunk);
      let out: PromptSamples[];
      try {
        out = await sampler.sample(
          part.map((p) => ({ prompt: p.prompt, n, params: params(p, temperature) })),
          o.signal,
        );
      } catch (err) {
        if (err instanceof SampleFailure) throw failure(part[err.request]!, s + err.request, err.reason, o.source ?? sampler.name, err);
        throw err;
      }
      out.forEach((ps, i) => {
        const bad = ps.completions.find((c) => c.finish === 'error');
        if (bad !== undefined) throw failure(part[i]!, s + i, bad.error ?? 'unknown error', o.source ?? sampler.name);
        each(s + i, ps.completions, ps.completionTokens ?? ps.completions.reduce((t, c) => t + c.tokens.length, 0));
      });
      progress?.(Math.min(s + chunk, problems.length));
    }
  };

  // Each reward reads its problem (the unit, rounding and options it asks); one options object per problem.
  const verify = problems.map((p) => (p.question ? { problem: p.question } : undefined));
  const outcomes: SampleOutcome[][] = [];
  const tokens: number[] = [];
  const examples: EvaluateResult['examples'] = [];
  const graded: StepQualitySample[][] = [];
  let finished = 0;
  await pass(
    o.n,
    o.temperature,
    (p, samples, count) => {
      tokens.push(count);
      graded.push([]);
      outcomes.push(
        samples.map((s) => {
          const text = textOf(s);
          const r = mathReward(text, problems[p]!.answer, verify[p]);
          if (problems[p]!.chain !== undefined) graded[p]!.push({ text, correct: r.reward > 0 });
          if (s.finish === 'stop') finished++;
          if (examples.length < (o.examples ?? 0))
            examples.push({ question: problems[p]!.question ?? '', answer: problems[p]!.answer, completion: text, correct: r.reward > 0 });
          return { correct: r.reward > 0, truncated: s.finish === 'length', answered: r.extracted !== null };
        }),
      );
    },
    o.onProgress,
  );
  const score = scoreDataset(outcomes, o.n, tokens);
  const result: EvaluateResult = { ...score, finished: finished / (problems.length * o.n), examples };
  const chained = problems.flatMap((p, i) => (p.chain === undefined ? [] : [{ chain: p.chain, samples: graded[i]!, tokens: tokens[i]! }]));
  if (chained.length > 0) result.stepQuality = stepQuality(chained);
  const P = problems.length;
  if (o.greedy === true) {
    const greedyCorrect: number[] = [];
    if (greedy && o.n === 1) greedyCorrect.push(...score.correct);
    else await pass(1, 0, (p, [s]) => greedyCorrect.push(mathReward(textOf(s!), problems[p]!.answer, verify[p]).reward > 0 ? 1 : 0));
    result.greedyCorrect = greedyCorrect;
    result.greedyAccuracy = greedyCorrect.reduce((a, c) => a + c, 0) / P;
  }
  return result;
}

/** The error of a failed sample, at its problem's file and line (or its index). */
function failure(p: EvalProblem, index: number, reason: string, source: string, cause?: unknown): EvaluationError {
  return new EvaluationError(
    'sampling_failed',
    `sampling from ${source} failed: ${reason}`,
    p.location ?? { index },
    cause === undefined ? {} : { cause },
  );
}
