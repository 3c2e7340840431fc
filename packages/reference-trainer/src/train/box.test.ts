/**
 * `saliency.box` in a training step: on completions with two boxes, the box it names is the one
 * whose span GRAIL's answer loss covers (the grad x embedding scores vanish after it) and whose
 * content the override sets to w_max; the reward still grades the last box. The sampler is
 * scripted (the warm-up policy does not write two boxes on demand); everything else is real: the
 * embedded checkpoint, its tokenizer, the span locator, the saliency pass, the estimator, the update.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { getSpans } from '@rlvr/core';
import type { AnswerSpans, RolloutBatch } from '@rlvr/core';
import { prepareEstimator } from '@rlvr/advantages';
import { loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import type { Qwen3Model, Tokenizer } from '@rlvr/policy';
import { policyTokenBytes, spanLocator } from '@rlvr/rollout';
import type { Sampler } from '@rlvr/rollout';
import { computeSignals, parseSignalConfig } from '@rlvr/saliency';
import { Trainer } from '@rlvr/trainer';
import { EMBEDDED_CHECKPOINT, parseTrainConfig } from './config.js';
import { rlStep } from './step.js';

/** The group: the last box graded 5 (correct), then 6 (wrong); each has an earlier box too. */
const TEXTS = ['2 + 3 = \\boxed{4}, no: 2 + 3 = \\boxed{5}.', '2 + 3 = \\boxed{5}, no: 2 + 3 = \\boxed{6}.'];

let tokenizer: Tokenizer;
let eos: number;
beforeAll(async () => {
  await selectBackend({ backend: 'cpu' });
  tokenizer = loadTokenizer(EMBEDDED_CHECKPOINT);
  eos = tokenizer.specialId('<|im_end|>') ?? tokenizer.specialId('<|endoftext|>')!;
});
afterAll(() => tokenizer.free());

/** Returns TEXTS (each followed by EOS) for every request, in order. */
function scripted(): Sampler {
  return {
    name: 'scripted',
    tokenBytes: policyTokenBytes(tokenizer),
    sample: async (requests) =>
      requests.map((r) => ({
        promptTokens: [...r.prompt.tokens!],
        completions: Array.from({ length: r.n }, (_, k) => ({
          tokens: [...tokenizer.encode(TEXTS[k % TEXTS.length]!), eos],
          finish: 'stop' as const,
        })),
      })),
  };
}

async function step(
  box: 'first' | 'last',
): Promise<{ batch: RolloutBatch; weights: Float32Array; scores: Float32Array; model: Qwen3Model }> {
  const config = parseTrainConfig({
    estimator: 'grail',
    estimatorConfig: { symmetry: 'both' },
    saliency: { box },
    rollout: { prompts: 1, groupSize: 2, maxNewTokens: 64 },
  });
  const model = loadModel(EMBEDDED_CHECKPOINT);
  const estimator = prepareEstimator(config.estimator, config.estimatorConfig);
  const trainer = new Trainer(model, config.trainer, { padId: eos });
  try {
    const tasks = [{ question: 'What is 2 + 3?', answer: '5', prompt: tokenizer.encode('User: What is 2 + 3?\nAssistant:') }];
    const out = await rlStep(config, estimator, trainer, scripted(), tasks, 1, eos);
    // the saliency scores of that batch (after the update: which tokens are zero does not depend on the parameters)
    const plan = parseSignalConfig(config.saliency, estimator.needs, { estimator: 'grail' });
    const scores = (await computeSignals(model, out.batch, plan, { padId: eos, tokenBudget: 8192 })).results['grad-x-emb']!.scores;
    return { batch: out.batch, weights: out.adv.weights, scores, model };
  } finally {
    trainer.optimizer.dispose();
  }
}

describe('saliency.box: which box GRAIL weights in rlvr train', () => {
  test.each(['first', 'last'] as const)(
    'box %s: the answer loss and the content override use that box; the reward grades the last',
    async (box) => {
      const { batch, weights, scores, model } = await step(box);
      try {
        expect(Array.from(batch.rewards)).toEqual([1, 0]);
        const locate = (which: 'first' | 'last', i: number): AnswerSpans =>
          spanLocator({ which }).fromTokens(
            batch.completionTokens.subarray(batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!),
            policyTokenBytes(tokenizer),
          )!;
        for (let i = 0; i < 2; i++) {
          const chosen = locate(box, i);
          const other = locate(box === 'first' ? 'last' : 'first', i);
          expect(other.open[0]).not.toBe(chosen.open[0]);
          expect(getSpans(batch, i)).toEqual(chosen);
          const c0 = batch.completionOffsets[i]!;
          const c1 = batch.completionOffsets[i + 1]!;
          const w = (t: number) => weights[c0 + t]!;
          const s = (t: number) => scores[c0 + t]!;
          // the content override: w_max on the chosen box's content, w_mean on its delimiters and every later token
          for (let t = chosen.content[0]; t < chosen.content[1]; t++) expect(w(t)).toBe(5);
          for (let t = chosen.close[0]; t < c1 - c0; t++) expect(w(t)).toBe(1);
          // the answer loss covers the chosen box: a token after it (read from the position that predicts it) has no gradient
          for (let t = chosen.close[1]; t < c1 - c0; t++) expect(s(t)).toBe(0);
          for (let t = 0; t < chosen.close[1]; t++) expect(s(t)).toBeGreaterThan(0);
          if (box === 'first') {
            // the later box is post-answer: weight 1, no score
            for (let t = other.open[0]; t < other.close[1]; t++) expect([w(t), s(t)]).toEqual([1, 0]);
          } else {
            // the earlier box is reasoning: scored, weighted by its z-score, not overridden
            for (let t = other.content[0]; t < other.content[1]; t++) {
              expect(s(t)).toBeGreaterThan(0);
              expect(w(t)).not.toBe(5);
            }
          }
        }
      } finally {
        model.dispose();
      }
    },
  );
});
