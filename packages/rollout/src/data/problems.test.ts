import { describe, expect, test } from 'vitest';
import { prunedTokenizer, prunedVocab } from '@rlvr/policy/tokenizer';
import { chatmlTemplate } from '@rlvr/policy/tokenizer';
import { RolloutError } from '../errors.js';
import { FileStream, TaskStream, checkPrompts, splitHeldOut, toPromptTasks } from './problems.js';
import { BOXED_INSTRUCTION, promptBuilder } from './prompt.js';
import { syntheticGenerator } from '@rlvr/tasks';

const EASY = { minSteps: 1, maxSteps: 2, digits: 1, operations: ['add', 'sub'] as ('add' | 'sub')[], maxFactor: 5 };

describe('TaskStream', () => {
  test('the same seed gives the same problems; held-out questions never appear; the cursor resumes the order', () => {
    const heldOut = syntheticGenerator(EASY).tasks(0x5eed0e, 128);
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

describe('checkPrompts', () => {
  test("refuses a prompt that cannot fit the policy's context, naming the file and line (else the problem) and the field", () => {
    const tokenizer = prunedTokenizer(prunedVocab('cl100k_base', ['What is 2 + 3?', BOXED_INSTRUCTION, 'User: \n\nAssistant:\n'], []));
    const builder = promptBuilder();
    const problems = [{ question: 'What is 2 + 3?', answer: '5', source: { file: 'train.jsonl', line: 4 } }];
    const fits = checkPrompts(problems, tokenizer, builder, { context: 256, maxNewTokens: 64, field: 'rollout' });
    expect(fits).toEqual(toPromptTasks(problems, tokenizer, builder));
    const n = fits[0]!.prompt.length;
    let err: unknown;
    try {
      checkPrompts(problems, tokenizer, builder, { context: n + 10, maxNewTokens: 11, field: 'rollout' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RolloutError);
    expect((err as RolloutError).message).toBe(
      `train.jsonl:4: question: its prompt is ${n} tokens; with rollout.maxNewTokens 11 it exceeds the policy's context of ${n + 10} tokens (max_position_embeddings)`,
    );
    const long = [{ question: 'x'.repeat(33 * 8), answer: '1' }];
    expect(() => checkPrompts(long, tokenizer, builder, { context: 8, maxNewTokens: 1, field: 'eval' })).toThrow(
      "item 0: held-out problem 0 is 264 characters, too long for the policy's context of 8 tokens (at most 256 characters)",
    );
    tokenizer.free();
  });
});
