import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PolicyWorkers, loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import type { Qwen3Model, Tokenizer } from '@rlvr/policy';
import {
  SyntheticOptionsSchema,
  modelChatTemplate,
  plainChatTemplate,
  policySampler,
  promptBuilder,
  syntheticGenerator,
  workerSampler,
} from '@rlvr/rollout';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { greedyEval, heldOutEval } from './held-out.js';
import type { HeldOutOptions, HeldOutTask } from './held-out.js';
import { WARMUP } from './test-utils/paths.js';

/**
 * What the two held-out evaluators gave before they became this one (written by
 * test/fixtures/held-out-before.mjs from reference-trainer's train/held-out-eval.ts and
 * pretrain/evaluate.ts at db19ff7): rlvr train's embedded default and rlvr pretrain's greedy
 * evaluation, on the embedded checkpoint. The README's 50.2% and 61.7% are `train`.
 */
const BEFORE = JSON.parse(readFileSync(fileURLToPath(new URL('../test/fixtures/held-out-before.json', import.meta.url)), 'utf8')) as {
  train: {
    options: HeldOutOptions;
    correct: number[];
    greedyCorrect: number[];
    accuracy: number;
    passAtN: number;
    greedyAccuracy: number;
    meanTokens: number;
    truncated: number;
  };
  pretrain: {
    options: { maxNewTokens: number; batchSize: number; eosId: number };
    accuracy: number;
    correct: number;
    problems: number;
    finished: number;
    meanTokens: number;
    examples: unknown[];
  };
};

/** The embedded default's held-out problems (`rlvr train`: seed 0x5eed0e, 128 easy problems), rendered as rlvr train renders them. */
function heldOut(tokenizer: Tokenizer): { train: HeldOutTask[]; pretrain: HeldOutTask[] } {
  const problems = syntheticGenerator(SyntheticOptionsSchema.parse({ minSteps: 1, maxSteps: 2, digits: 1 })).tasks(0x5eed0e, 128, 0);
  const chat = promptBuilder({}, modelChatTemplate(WARMUP, tokenizer).apply ?? plainChatTemplate);
  const plain = promptBuilder();
  return {
    train: problems.map((t) => ({ question: t.question, answer: t.answer, prompt: tokenizer.encode(chat.text(t.question)) })),
    pretrain: problems.map((t) => ({
      question: t.question,
      answer: t.answer,
      prompt: tokenizer.encode(plain.text(t.question), { allowSpecial: false }),
    })),
  };
}

let model: Qwen3Model;
let tokenizer: Tokenizer;
let tasks: ReturnType<typeof heldOut>;
beforeAll(async () => {
  await selectBackend({ backend: 'wasm' });
  model = loadModel(WARMUP, { trainable: false });
  tokenizer = loadTokenizer(WARMUP);
  tasks = heldOut(tokenizer);
});
afterAll(() => {
  model?.dispose();
  tokenizer?.free();
});

describe('the one held-out evaluator gives the numbers of the evaluators it replaced', () => {
  // The whole embedded-default evaluation (128 problems x 8 samples, 8 decoding batches of 128 rows)
  // is too long for a test on a busy machine; its first batch is the first 16 problems' 128 rows,
  // decoded exactly as in the full run (same rows, same seeds). The full run was checked once:
  // see the eval package README ("The numbers of rlvr train").
  test("rlvr train's embedded default, its first decoding batch: every problem's count", async () => {
    const r = await heldOutEval(model, tokenizer, tasks.train.slice(0, 16), { ...BEFORE.train.options, greedy: false });
    expect(r.correct).toEqual(BEFORE.train.correct.slice(0, 16));
    expect(r.correct.reduce((a, c) => a + c, 0)).toBeGreaterThan(0);
  });

  test("greedy, all 128 problems in one batch: rlvr pretrain's evaluation exactly, and rlvr train's 61.7%", async () => {
    const r = await greedyEval(model, tokenizer, tasks.pretrain, BEFORE.pretrain.options);
    expect(r).toEqual({
      accuracy: BEFORE.pretrain.accuracy,
      correct: BEFORE.pretrain.correct,
      problems: BEFORE.pretrain.problems,
      finished: BEFORE.pretrain.finished,
      meanTokens: BEFORE.pretrain.meanTokens,
      examples: BEFORE.pretrain.examples,
    });
    // the warm-up has no chat template: rlvr train's prompts are the same tokens, its greedy pass the same batch
    expect(tasks.train.map((t) => t.prompt)).toEqual(tasks.pretrain.map((t) => t.prompt));
    expect(r.correct).toBe(BEFORE.train.greedyCorrect.reduce((a, c) => a + c, 0));
    expect(r.accuracy).toBe(BEFORE.train.greedyAccuracy);
    expect(r.accuracy.toFixed(3)).toBe('0.617');
  });
});

describe('heldOutEval', () => {
  test('on policy workers (workerSampler, 2 threads): the same counts as decoding in this thread', async () => {
    const o = { ...BEFORE.train.options, greedy: false };
    const workers = await PolicyWorkers.start(model, { workers: 2 });
    try {
      const base = policySampler(model, tokenizer, { batchSize: o.batchSize, eosTokenIds: [...o.eosIds], padTokenId: o.eosIds[0]! });
      const sampler = workerSampler(workers, model, base, {
        modelDir: WARMUP,
        options: { batchSize: o.batchSize, eosTokenIds: [...o.eosIds], padTokenId: o.eosIds[0]! },
      });
      const r = await heldOutEval(model, tokenizer, tasks.train.slice(0, 16), { ...o, sampler });
      expect(r.correct).toEqual(BEFORE.train.correct.slice(0, 16));
      expect(workers.lastRun!.task.every((s) => s > 0)).toBe(true);
    } finally {
      await workers.close();
    }
  });

  test('at temperature 0 every sample is the greedy one: accuracy = pass@n = greedy accuracy', async () => {
    const few = tasks.train.slice(0, 24);
    const r = await heldOutEval(model, tokenizer, few, {
      n: 3,
      temperature: 0,
      topP: 1,
      maxNewTokens: 48,
      batchSize: 32,
      seed: 1,
      eosIds: [407],
      greedy: true,
    });
    expect(r.correct.every((c) => c === 0 || c === 3)).toBe(true);
    expect(r.accuracy).toBeCloseTo(r.greedyAccuracy!, 12);
    expect(r.passAtN).toBeCloseTo(r.greedyAccuracy!, 12);
    expect(r.greedyCorrect).toEqual(r.correct.map((c) => c / 3));
    expect(r.greedyAccuracy).toBeGreaterThan(0);
  });

  test('sampled: the same seed gives the same counts, another seed others; accuracy and pass@n follow from them', async () => {
    const few = tasks.train.slice(0, 16);
    const o = { n: 4, temperature: 0.6, topP: 0.95, maxNewTokens: 48, batchSize: 64, seed: 5, eosIds: [407], greedy: false };
    const a = await heldOutEval(model, tokenizer, few, o);
    const b = await heldOutEval(model, tokenizer, few, o);
    const c = await heldOutEval(model, tokenizer, few, { ...o, seed: 6 });
    expect(b.correct).toEqual(a.correct);
    expect(c.correct).not.toEqual(a.correct);
    expect(a.accuracy).toBeCloseTo(a.correct.reduce((s, x) => s + x, 0) / 64, 12);
    expect(a.passAtN).toBeCloseTo(a.correct.filter((x) => x > 0).length / 16, 12);
    expect(a.greedyAccuracy).toBeUndefined();
  });
});
