/**
 * The held-out evaluation of a policy being trained, on prompts already tokenized: `rlvr train`
 * (n sampled completions per problem, and greedy) and `rlvr pretrain` (greedy only) call these,
 * and both are `evaluateProblems` on the in-process policy sampler.
 */
import { METRIC, Rng, passAtMetric, percent, plural } from '@rlvr/core';
import type { ProblemAux } from '@rlvr/core';
import { parseChain } from '@rlvr/tasks';
import type { Qwen3Model, Tokenizer } from '@rlvr/policy';
import { policySampler } from '@rlvr/rollout';
import type { Sampler } from '@rlvr/rollout';
import { evaluateProblems } from './evaluate.js';
import type { EvaluateResult } from './evaluate.js';

/** A held-out problem ready to sample: its question, gold answer and prompt token ids. */
export interface HeldOutTask {
  question: string;
  answer: string;
  /** [P] token ids of the rendered prompt */
  prompt: readonly number[];
  /** the problem's auxiliary data (`PromptTask.aux`): a `chain` there (the synthetic tasks) puts it in the Step-Quality metrics */
  aux?: ProblemAux;
}

export interface HeldOutOptions {
  /** samples per problem */
  n: number;
  temperature: number;
  topP: number;
  maxNewTokens: number;
  /** rows decoded together */
  batchSize: number;
  /** seeds the samples: problem i gets the i-th draw of `Rng(seed)`, so the same seed and weights give the same samples */
  seed: number;
  /** token ids that end a completion (the first also pads) */
  eosIds: readonly number[];
  /** also decode each problem greedily */
  greedy: boolean;
  /** the first completions to return as text (default 0) */
  examples?: number;
  /**
   * decode with this sampler instead of a policy sampler on `model` in this thread, e.g.
   * `workerSampler` of `@rlvr/rollout` on policy workers (built with `batchSize`, `eosIds` and
   * `eosIds[0]` as padding, for the same samples)
   */
  sampler?: Sampler;
}

export type HeldOutResult = EvaluateResult;

/** Sample `n` completions per held-out problem with the KV-cache policy sampler and grade them (`evaluateProblems`). */
export async function heldOutEval(
  model: Qwen3Model,
  tokenizer: Tokenizer,
  tasks: readonly HeldOutTask[],
  o: HeldOutOptions,
): Promise<HeldOutResult> {
  const eos = new Set(o.eosIds);
  const sampler =
    o.sampler ?? policySampler(model, tokenizer, { batchSize: o.batchSize, eosTokenIds: [...o.eosIds], padTokenId: o.eosIds[0]! });
  const rng = new Rng(o.seed);
  return evaluateProblems(
    sampler,
    tasks.map((t) => ({
      prompt: { tokens: t.prompt },
      answer: t.answer,
      question: t.question,
      seed: rng.uint32(),
      ...(t.aux?.chain === undefined ? {} : { chain: parseChain(t.aux.chain) }),
    })),
    {
      n: o.n,
      temperature: o.temperature,
      topP: o.topP,
      topK: 0,
      maxNewTokens: o.maxNewTokens,
      greedy: o.greedy,
      examples: o.examples ?? 0,
      text: (tokens) => tokenizer.decode(tokens.filter((id) => !eos.has(id))),
      source: 'the policy',
    },
  );
}

/**
 * A trainer's record of `e` at `step`: its `evals.jsonl` line (`@rlvr/report`'s `EvalRecord`, per-problem
 * counts included), its `metrics.jsonl` columns (core's `METRIC` names) and one log line (`temperature` the samples').
 */
export function heldOutRecord(e: HeldOutResult, step: number, temperature: number) {
  const greedy = e.greedyAccuracy === undefined ? undefined : { greedyAccuracy: e.greedyAccuracy, greedyCorrect: e.greedyCorrect ?? [] };
  return {
    record: {
      step,
      accuracy: e.accuracy,
      passAtN: e.passAtN,
      n: e.n,
      problems: e.problems,
      correct: e.correct,
      ...greedy,
      ...(e.stepQuality === undefined ? {} : { stepQuality: e.stepQuality }),
    },
    metrics: {
      [METRIC.accuracy]: e.accuracy,
      [passAtMetric(e.n)]: e.passAtN,
      ...(greedy === undefined ? {} : { [METRIC.accuracyGreedy]: greedy.greedyAccuracy }),
      [METRIC.evalMeanTokens]: e.meanTokens,
      [METRIC.evalTruncated]: e.truncated,
    } as Record<string, number>,
    line: `eval step ${step}: accuracy ${percent(e.accuracy)} (mean of ${plural(e.n, 'sample')} at T=${temperature}), pass@${e.n} ${percent(e.passAtN)}${greedy === undefined ? '' : `, greedy ${percent(greedy.greedyAccuracy)}`} on ${plural(e.problems, 'held-out problem')}`,
  };
}

/** What `rlvr pretrain` logs of a greedy evaluation. */
export interface GreedyEval {
  /** fraction of problems whose last `\boxed{}` math-verifies against the gold answer */
  accuracy: number;
  /** problems solved */
  correct: number;
  problems: number;
  /** fraction of completions that ended at EOS (not cut by maxNewTokens) */
  finished: number;
  /** mean completion length in tokens */
  meanTokens: number;
  /** the first completions, for a look */
  examples: { question: string; answer: string; completion: string; correct: boolean }[];
}

/** Greedy decoding of each task (`heldOutEval` with one sample at temperature 0), graded by `mathReward`. */
export async function greedyEval(
  model: Qwen3Model,
  tokenizer: Tokenizer,
  tasks: readonly HeldOutTask[],
  o: { maxNewTokens: number; batchSize: number; eosId: number; examples?: number },
): Promise<GreedyEval> {
  const r = await heldOutEval(model, tokenizer, tasks, {
    n: 1,
    temperature: 0,
    topP: 1,
    maxNewTokens: o.maxNewTokens,
    batchSize: o.batchSize,
    seed: 0,
    eosIds: [o.eosId],
    greedy: false,
    examples: o.examples ?? 2,
  });
  return {
    accuracy: r.accuracy,
    correct: r.correct.reduce((a, c) => a + c, 0),
    problems: r.problems,
    finished: r.finished,
    meanTokens: r.meanTokens,
    examples: r.examples,
  };
}
