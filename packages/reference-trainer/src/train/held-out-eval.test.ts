import { loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import { promptBuilder } from '@rlvr/rollout';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { greedyAccuracy } from '../pretrain/evaluate.js';
import { EMBEDDED_CHECKPOINT } from './config.js';
import { heldOutEval } from './held-out-eval.js';
import { heldOutTasks, toPromptTasks } from './tasks.js';
import type { Qwen3Model, Tokenizer } from '@rlvr/policy';

let model: Qwen3Model;
let tokenizer: Tokenizer;
beforeAll(async () => {
  await selectBackend({ backend: 'wasm' });
  model = loadModel(EMBEDDED_CHECKPOINT);
  tokenizer = loadTokenizer(EMBEDDED_CHECKPOINT);
});
afterAll(() => model.dispose());

describe('heldOutEval', () => {
  const EASY = { minSteps: 1, maxSteps: 2, digits: 1, operations: ['add', 'sub'] as ('add' | 'sub')[], maxFactor: 5 };

  test('at temperature 0 every sample is the greedy one: accuracy = pass@n = the warm-up greedy evaluation', async () => {
    const tasks = toPromptTasks(heldOutTasks(0x5eed0e, 24, EASY), tokenizer, promptBuilder());
    const eosId = model.config.eos_token_id as number;
    const r = await heldOutEval(model, tokenizer, tasks, { n: 3, temperature: 0, topP: 1, maxNewTokens: 48, batchSize: 32, seed: 1, eosIds: [eosId], greedy: true });
    const reference = await greedyAccuracy(model, tokenizer, tasks.map((t) => ({ ...t, completion: [] })), { maxNewTokens: 48, batchSize: 32, eosId });
    expect(r.correct.every((c) => c === 0 || c === 3)).toBe(true);
    expect(r.accuracy).toBeCloseTo(reference.accuracy, 12);
    expect(r.passAtN).toBeCloseTo(reference.accuracy, 12);
    expect(r.greedyAccuracy).toBe(reference.accuracy);
    expect(reference.correct).toBeGreaterThan(0);
  });

  test('sampled: the same seed gives the same counts; accuracy and pass@n follow from them', async () => {
    const tasks = toPromptTasks(heldOutTasks(0x5eed0e, 16, EASY), tokenizer, promptBuilder());
    const o = { n: 4, temperature: 0.6, topP: 0.95, maxNewTokens: 48, batchSize: 64, seed: 5, eosIds: [model.config.eos_token_id as number], greedy: false };
    const a = await heldOutEval(model, tokenizer, tasks, o);
    const b = await heldOutEval(model, tokenizer, tasks, o);
    expect(b.correct).toEqual(a.correct);
    expect(a.accuracy).toBeCloseTo(a.correct.reduce((s, c) => s + c, 0) / 64, 12);
    expect(a.passAtN).toBeCloseTo(a.correct.filter((c) => c > 0).length / 16, 12);
    expect(a.greedyAccuracy).toBeUndefined();
  });
});
