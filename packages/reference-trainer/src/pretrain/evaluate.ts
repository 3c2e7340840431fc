import { mathReward } from '@rlvr/math-verify';
import type { Qwen3Model, Tokenizer } from '@rlvr/policy';
import { policySampler } from '@rlvr/rollout';
import type { SftTask } from './data.js';

export interface GreedyEval {
  /** fraction of problems whose last `\boxed{}` math-verifies against the gold answer */
  accuracy: number;
  correct: number;
  problems: number;
  /** fraction of completions that ended at EOS (not cut by maxNewTokens) */
  finished: number;
  /** mean completion length in tokens */
  meanTokens: number;
  /** the first completions, for a look */
  examples: { question: string; answer: string; completion: string; correct: boolean }[];
}

/** Greedy decoding (KV cache, `@rlvr/rollout`'s policy sampler) of each task, graded by `mathReward`. */
export async function greedyAccuracy(model: Qwen3Model, tokenizer: Tokenizer, tasks: readonly SftTask[], options: { maxNewTokens: number; batchSize: number; eosId: number; examples?: number }): Promise<GreedyEval> {
  const sampler = policySampler(model, tokenizer, { batchSize: options.batchSize, eosTokenIds: [options.eosId], padTokenId: options.eosId });
  const params = { temperature: 0, topP: 1, topK: 0, maxNewTokens: options.maxNewTokens, stop: [], seed: 0 };
  const out = await sampler.sample(tasks.map((t) => ({ prompt: { tokens: t.prompt }, n: 1, params })));
  let correct = 0;
  let finished = 0;
  let tokens = 0;
  const examples: GreedyEval['examples'] = [];
  out.forEach((ps, i) => {
    const c = ps.completions[0]!;
    if (c.finish === 'error') throw new Error(`greedy decoding failed on held-out problem ${i}: ${c.error ?? 'unknown error'}`);
    const text = c.text ?? tokenizer.decode(c.tokens.filter((id) => id !== options.eosId));
    const ok = mathReward(text, tasks[i]!.answer).reward > 0;
    if (ok) correct++;
    if (c.finish === 'stop') finished++;
    tokens += c.tokens.length;
    if (examples.length < (options.examples ?? 2)) examples.push({ question: tasks[i]!.question, answer: tasks[i]!.answer, completion: text, correct: ok });
  });
  const n = tasks.length;
  return { accuracy: correct / n, correct, problems: n, finished: finished / n, meanTokens: tokens / n, examples };
}
