import { describe, expect, test } from 'vitest';
import { duration, progressLine } from './progress.js';
import { estimatorMetrics } from './step.js';
import { prunedTokenizer, prunedVocab } from '@rlvr/policy';
import { BOXED_INSTRUCTION, chatmlTemplate, promptBuilder } from '@rlvr/rollout';
import { FileStream, TaskStream, heldOutTasks, splitHeldOut, toPromptTasks } from './tasks.js';

const EASY = { minSteps: 1, maxSteps: 2, digits: 1, operations: ['add', 'sub'] as ('add' | 'sub')[], maxFactor: 5 };

describe('TaskStream', () => {
  test('the same seed gives the same problems; held-out questions never appear; the cursor resumes the order', () => {
    const heldOut = heldOutTasks(0x5eed0e, 128, EASY);
    const a = new TaskStream(3, EASY, heldOut);
    const first = a.next(600);
    const held = new Set(heldOut.map((t) => t.question));
    expect(first.filter((t) => held.has(t.question))).toEqual([]);
    // the small question space means some draws were skipped
    expect(a.cursor).toBeGreaterThan(600);
    const b = new TaskStream(3, EASY, heldOut);
    expect(b.next(600)).toEqual(first);
    const c = new TaskStream(3, EASY, heldOut);
    c.next(250);
    const resumed = new TaskStream(3, EASY, heldOut);
    resumed.cursor = c.cursor;
    expect(resumed.next(350)).toEqual(first.slice(250));
    expect(new TaskStream(4, EASY, heldOut).next(20)).not.toEqual(first.slice(0, 20));
  });
});

describe('FileStream and splitHeldOut', () => {
  const problems = Array.from({ length: 10 }, (_, i) => ({ question: `q${i}`, answer: String(i) }));

  test('every problem once per epoch, each epoch in its own seeded order; the cursor resumes it', () => {
    const s = new FileStream(problems, 1);
    const e1 = s.next(10).map((p) => p.question);
    const e2 = s.next(10).map((p) => p.question);
    expect([...e1].sort()).toEqual(problems.map((p) => p.question).sort());
    expect([...e2].sort()).toEqual([...e1].sort());
    expect(e2).not.toEqual(e1);
    const r = new FileStream(problems, 1);
    r.cursor = 7;
    expect(r.next(13).map((p) => p.question)).toEqual([...e1.slice(7), ...e2]);
    expect(() => new FileStream([], 1)).toThrow('no problems');
  });

  test('the held-out part and the training part are disjoint, seeded, in file order', () => {
    const { heldOut, train } = splitHeldOut(problems, 3, 9);
    expect(heldOut).toHaveLength(3);
    expect(train).toHaveLength(7);
    expect(new Set([...heldOut, ...train].map((p) => p.question)).size).toBe(10);
    expect(splitHeldOut(problems, 3, 9)).toEqual({ heldOut, train });
    const idx = heldOut.map((p) => Number(p.answer));
    expect(idx).toEqual([...idx].sort((a, b) => a - b));
    expect(splitHeldOut(problems, 50, 9).train).toEqual([]);
  });
});

describe('toPromptTasks', () => {
  test("a chat template's markers become its special tokens; the plain layout has none", () => {
    const tokenizer = prunedTokenizer(
      prunedVocab(
        'cl100k_base',
        ['What is 2 + 3?', BOXED_INSTRUCTION, 'user\nassistant\n<think>\n\n</think>\n\n'],
        ['<|endoftext|>', '<|im_start|>', '<|im_end|>'],
      ),
    );
    const problem = [{ question: 'What is 2 + 3?', answer: '5' }];
    const [chat] = toPromptTasks(problem, tokenizer, promptBuilder({}, chatmlTemplate));
    const start = tokenizer.specialId('<|im_start|>')!;
    expect(chat!.prompt.filter((id) => id === start)).toHaveLength(2);
    expect(chat!.prompt.filter((id) => id === tokenizer.specialId('<|im_end|>'))).toHaveLength(1);
    expect(tokenizer.decode(chat!.prompt)).toBe(promptBuilder({}, chatmlTemplate).text('What is 2 + 3?'));
    const [plain] = toPromptTasks(problem, tokenizer, promptBuilder());
    expect(plain!.prompt.some((id) => id === start)).toBe(false);
    tokenizer.free();
  });
});

describe('estimatorMetrics', () => {
  test('weight statistics take the report names; the rest goes under adv/', () => {
    expect(estimatorMetrics({ weight_mean: 1.2, weight_max_correct: 5, weight_std_wrong: 0.3, fallback_rate: 0.1 })).toEqual({
      'weights/all/mean': 1.2,
      'weights/correct/max': 5,
      'weights/wrong/std': 0.3,
      'adv/fallback_rate': 0.1,
    });
  });
});

describe('progressLine', () => {
  test('bar, steps, reward, accuracy, rate and time left', () => {
    expect(progressLine({ step: 30, steps: 120, reward: 0.4125, accuracy: 0.6171875, secondsPerStep: 2 }, 12)).toBe(
      '[###.........]  30/120  reward 0.41  acc 61.7%  2.0 s/step  eta 3m00s',
    );
    expect(progressLine({ step: 0, steps: 5, reward: Number.NaN, accuracy: Number.NaN, secondsPerStep: Number.NaN }, 4)).toBe(
      '[....] 0/5  reward   -   acc -  - s/step  eta -',
    );
    expect([duration(59.4), duration(95), duration(3700)]).toEqual(['59s', '1m35s', '1h01m']);
  });
});
