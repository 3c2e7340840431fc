/**
 * What the page computes, and what the test computes again in Node on the cpu backend: the embedded
 * default's fused GRAIL pass (log-probs + grad x embedding saliency, `@rlvr/saliency`'s signal step),
 * the GRAIL weights (`@rlvr/advantages`) and ONE update (`@rlvr/trainer`'s `Trainer.step`), on fixed
 * completions of the embedded task's prompts. Imported by the page (bundled with the packages' browser
 * entries) and by the test (their Node entries): one definition of the computation.
 */
import { METRIC, batchFromRows, fillBatchSpans, type RolloutRowInput } from '@rlvr/core';
import { prepareEstimator } from '@rlvr/advantages';
import type { ApplyChatTemplate, Qwen3Model, Tokenizer } from '@rlvr/policy';
import { computeSignals, parseSignalConfig } from '@rlvr/saliency';
import { Trainer } from '@rlvr/trainer';

/** One problem of the embedded task (`tasks.json`, written by build.mjs from `@rlvr/tasks`). */
export interface PageTask {
  question: string;
  answer: string;
  /** the worked solution, ending with `\boxed{answer}` */
  solution: string;
}

/** `@rlvr/rollout`'s BOXED_INSTRUCTION (the test checks they are equal: rollout is not bundled). */
export const INSTRUCTION = 'Please reason step by step, and put your final answer within \\boxed{}.';

export interface GrailStepResult {
  /** per rollout: its completion's tokens as text, whether it is the correct one */
  rollouts: { tokens: string[]; correct: boolean }[];
  /** `[totalTokens]`: the fused pass's log-probs of the completion tokens (the old log-probs of the update) */
  logprobs: number[];
  /** `[totalTokens]`: the GRAIL weight of every completion token (symmetry `both`: every rollout weighted) */
  weights: number[];
  /** the update's clipped-surrogate loss (`loss/policy`) */
  loss: number;
  /** the largest absolute change of any parameter in the update */
  maxParamChange: number;
  /** every metric of the update */
  metrics: Record<string, number>;
}

/**
 * Two completions per prompt: the task's own solution (reward 1) and the same with the boxed answer
 * off by one (reward 0), so that the group has a signal. Each completion ends with the EOS token.
 */
function pageRows(tasks: readonly PageTask[], tokenizer: Tokenizer, template: ApplyChatTemplate, eos: number): RolloutRowInput[] {
  return tasks.flatMap((t, group) => {
    const prompt = tokenizer.encode(
      template([{ role: 'user', content: `${t.question} ${INSTRUCTION}` }], { addGenerationPrompt: true, enableThinking: false }),
    );
    const wrong = t.solution.replace(`\\boxed{${t.answer}}`, `\\boxed{${Number(t.answer) + 1}}`);
    return [
      { group, prompt, completion: [...tokenizer.encode(t.solution, { allowSpecial: false }), eos], reward: 1 },
      { group, prompt, completion: [...tokenizer.encode(wrong, { allowSpecial: false }), eos], reward: 0 },
    ];
  });
}

/** The fused GRAIL pass, the weights and one update of `model` (changed in place) on `pageRows`. */
export async function grailStep(
  model: Qwen3Model,
  tokenizer: Tokenizer,
  template: ApplyChatTemplate,
  tasks: readonly PageTask[],
): Promise<GrailStepResult> {
  const eos = tokenizer.specialId('<|endoftext|>')!;
  const batch = batchFromRows(pageRows(tasks, tokenizer, template, eos));
  fillBatchSpans(batch, tokenizer);
  const estimator = prepareEstimator('grail', { symmetry: 'both' });
  const plan = parseSignalConfig({ 'grad-x-emb': {} }, estimator.needs, { temperature: 1, estimator: 'grail' });
  const pass = { padId: eos, tokenBudget: 8192 };
  const { signals, oldLogprobs } = await computeSignals(model, batch, plan, pass);
  if (oldLogprobs === undefined) throw new Error('the fused GRAIL pass gave no log-probs');
  const adv = estimator.estimate(batch, signals);
  const before = new Map<string, Float32Array>();
  for (const [name, v] of model.params) before.set(name, (await v.data()) as Float32Array);
  const trainer = new Trainer(model, { seed: 0 }, { padId: eos });
  const { metrics } = await trainer.step(batch, adv.advantages, { oldLogprobs });
  let maxParamChange = 0;
  for (const [name, v] of model.params) {
    const now = (await v.data()) as Float32Array;
    const old = before.get(name)!;
    for (let i = 0; i < now.length; i++) maxParamChange = Math.max(maxParamChange, Math.abs(now[i]! - old[i]!));
  }
  const rollouts = Array.from({ length: batch.numRollouts }, (_, i) => ({
    tokens: Array.from(batch.completionTokens.subarray(batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!), (id) =>
      tokenizer.decode([id]),
    ),
    correct: batch.rewards[i]! > 0,
  }));
  return {
    rollouts,
    logprobs: Array.from(oldLogprobs),
    weights: Array.from(adv.weights),
    loss: metrics[METRIC.lossPolicy] ?? Number.NaN,
    maxParamChange,
    metrics,
  };
}
