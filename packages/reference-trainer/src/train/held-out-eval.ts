import { Rng } from '@rlvr/core';
import { mathReward } from '@rlvr/math-verify';
import type { Qwen3Model, Tokenizer } from '@rlvr/policy';
import { policySampler } from '@rlvr/rollout';
import { meanPassAtK } from '../eval/pass-at-k.js';
import type { PromptTask } from './tasks.js';

export interface HeldOutOptions {
  /** samples per problem */
  n: number;
  temperature: number;
  topP: number;
  maxNewTokens: number;
  /** rows decoded together */
  batchSize: number;
  /** seeds the samples: the same seed and weights give the same samples */
  seed: number;
  /** token ids that end a completion */
  eosIds: number[];
  /** also decode each problem greedily */
  greedy: boolean;
}

export interface HeldOutResult {
  /** mean over problems of correct / n */
  accuracy: number;
  /** unbiased pass@n (the fraction of problems with a correct sample) */
  passAtN: number;
  n: number;
  problems: number;
  /** [problems] correct samples per problem */
  correct: number[];
  /** greedy accuracy, when asked for */
  greedyAccuracy?: number;
  /** [problems] 1 where the greedy completion is correct, when asked for */
  greedyCorrect?: number[];
  /** mean sampled completion length in tokens */
  meanTokens: number;
  /** fraction of samples cut by maxNewTokens */
  truncated: number;
}

/** Sample `n` completions per held-out problem (KV-cache policy sampler) and grade them with `mathReward`. */
export async function heldOutEval(model: Qwen3Model, tokenizer: Tokenizer, tasks: readonly PromptTask[], o: HeldOutOptions): Promise<HeldOutResult> {
  const sampler = policySampler(model, tokenizer, { batchSize: o.batchSize, eosTokenIds: o.eosIds, padTokenId: o.eosIds[0]! });
  const rng = new Rng(o.seed);
  const params = (temperature: number) => ({ temperature, topP: temperature === 0 ? 1 : o.topP, topK: 0, maxNewTokens: o.maxNewTokens, stop: [], seed: rng.uint32() });
  const grade = (task: PromptTask, c: { tokens: readonly number[]; text?: string; finish: string; error?: string }, i: number): boolean => {
    if (c.finish === 'error') throw new Error(`held-out problem ${i}: decoding failed: ${c.error ?? 'unknown error'}`);
    const text = c.text ?? tokenizer.decode(c.tokens.filter((id) => !o.eosIds.includes(id)));
    return mathReward(text, task.answer).reward > 0;
  };
  const sampled = await sampler.sample(tasks.map((t) => ({ prompt: { tokens: t.prompt }, n: o.n, params: params(o.temperature) })));
  const correct: number[] = [];
  let tokens = 0;
  let truncated = 0;
  sampled.forEach((ps, i) => {
    let c = 0;
    for (const s of ps.completions) {
      if (grade(tasks[i]!, s, i)) c++;
      tokens += s.tokens.length;
      if (s.finish === 'length') truncated++;
    }
    correct.push(c);
  });
  const samples = tasks.length * o.n;
  const result: HeldOutResult = {
    accuracy: correct.reduce((a, c) => a + c / o.n, 0) / tasks.length,
    passAtN: meanPassAtK(correct, o.n, o.n),
    n: o.n,
    problems: tasks.length,
    correct,
    meanTokens: tokens / samples,
    truncated: truncated / samples,
  };
  if (o.greedy) {
    const greedy = await sampler.sample(tasks.map((t) => ({ prompt: { tokens: t.prompt }, n: 1, params: params(0) })));
    result.greedyCorrect = greedy.map((ps, i) => (grade(tasks[i]!, ps.completions[0]!, i) ? 1 : 0));
    result.greedyAccuracy = result.greedyCorrect.reduce((a, c) => a + c, 0) / tasks.length;
  }
  return result;
}
