import { SIGNAL_NAMES } from '@rlvr/core';
import type { RolloutBatch } from '@rlvr/core';
import { loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import type { Qwen3Model } from '@rlvr/policy';
import { policySampler, promptBuilder, sampleGroups } from '@rlvr/rollout';
import { logprobsWithGradXEmb } from '@rlvr/saliency';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ReferenceTrainerError } from '../errors.js';
import { EMBEDDED_CHECKPOINT } from './config.js';
import { checkSignals, computeSignals } from './signals.js';
import { heldOutTasks, toPromptTasks } from './tasks.js';

const EASY = { minSteps: 1, maxSteps: 2, digits: 1, operations: ['add', 'sub'] as ('add' | 'sub')[], maxFactor: 5 };
let model: Qwen3Model;
let batch: RolloutBatch;
let eos: number;

beforeAll(async () => {
  await selectBackend({ backend: 'wasm' });
  model = loadModel(EMBEDDED_CHECKPOINT);
  const tokenizer = loadTokenizer(EMBEDDED_CHECKPOINT);
  const sampler = policySampler(model, tokenizer, { batchSize: 16 });
  eos = sampler.eosTokenIds[0]!;
  const tasks = toPromptTasks(heldOutTasks(77, 3, EASY), tokenizer, promptBuilder());
  ({ batch } = await sampleGroups(tasks.map((t) => ({ tokens: t.prompt })), sampler, { groupSize: 4, temperature: 1, maxNewTokens: 24, seed: 3 }));
});
afterAll(() => model.dispose());

const maxAbsDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};

describe('computeSignals', () => {
  test('old log-probs and entropies: the forward pass, the fused GRAIL pass and the KV-cache sampler agree', () => {
    const fused = computeSignals(model, batch, [SIGNAL_NAMES.gradXEmb], {}, { padId: eos, tokenBudget: 8192 });
    const forward = computeSignals(model, batch, [SIGNAL_NAMES.logprobsOld, SIGNAL_NAMES.entropy], {}, { padId: eos, tokenBudget: 8192 });
    const direct = logprobsWithGradXEmb(model, batch);
    expect(fused.signals.get(SIGNAL_NAMES.gradXEmb)).toEqual(direct.scores);
    expect(fused.oldLogprobs).toEqual(direct.logprobs);
    const logp = forward.signals.get(SIGNAL_NAMES.logprobsOld);
    expect(forward.oldLogprobs).toBe(logp);
    expect(logp.length).toBe(batch.completionTokens.length);
    expect(maxAbsDiff(logp, direct.logprobs)).toBeLessThan(1e-4);
    expect(maxAbsDiff(forward.signals.get(SIGNAL_NAMES.entropy), direct.entropy)).toBeLessThan(1e-4);
    // the sampler's own log-probs, from the incremental (KV-cache) decode
    expect(maxAbsDiff(logp, batch.behaviorLogprobs!)).toBeLessThan(1e-3);
    expect(Math.max(...logp)).toBeLessThanOrEqual(0);
  });

  test('no signal needed: no pass at all; the OAR-G signal comes from its backend', () => {
    const none = computeSignals(model, batch, [], {}, { padId: eos, tokenBudget: 8192 });
    expect(none.oldLogprobs).toBeUndefined();
    const oar = computeSignals(model, batch, [SIGNAL_NAMES.noisyKl], {}, { padId: eos, tokenBudget: 8192 });
    const s = oar.signals.get(SIGNAL_NAMES.noisyKl);
    expect(s.length).toBe(batch.completionTokens.length);
    expect(s.some((x) => x > 0)).toBe(true);
  });

  test('a signal nothing produces is refused before any work, naming what is available', () => {
    expect(() => checkSignals('grpo+mine', ['my.signal'])).toThrow(ReferenceTrainerError);
    expect(() => checkSignals('grpo+mine', ['my.signal'])).toThrow(/estimator grpo\+mine needs signal my\.signal, which no saliency backend produces \(available: logprobs\.old, policy\.entropy, saliency\.gradXEmb, saliency\.noisyKl, saliency\.perturbation\)/);
    expect(() => checkSignals('grail', [SIGNAL_NAMES.gradXEmb, SIGNAL_NAMES.entropy])).not.toThrow();
  });
});
