import { describe, expect, test } from 'vitest';
import { syntheticGenerator } from '@rlvr/tasks';
import { TaskStream } from './problems.js';
import { splitValidation, validationTasks } from './validation.js';

describe('validationTasks', () => {
  const gen = syntheticGenerator({ minSteps: 1, maxSteps: 2, digits: 1 });
  const heldOut = gen.tasks(7, 64);

  test('the first problems of stream validation/SEED, held-out questions skipped; deterministic', () => {
    const v = validationTasks(gen, 200, 7, heldOut);
    expect(v).toHaveLength(200);
    const held = new Set(heldOut.map((t) => t.question));
    expect(v.some((t) => held.has(t.question))).toBe(false);
    // what is left of the stream, in order
    const stream = Array.from({ length: 400 }, (_, i) => gen.task('validation/7', i)).filter((t) => !held.has(t.question));
    expect(v.map((t) => t.question)).toEqual(stream.slice(0, 200).map((t) => t.question));
    expect(validationTasks(gen, 200, 7, heldOut)).toEqual(v);
    expect(validationTasks(gen, 200, 8, heldOut).map((t) => t.question)).not.toEqual(v.map((t) => t.question));
  });

  test('a training stream that skips them never trains on one', () => {
    const v = validationTasks(gen, 100, 7, heldOut);
    const trained = new TaskStream(0, gen, [...heldOut, ...v]).next(2000).map((t) => t.question);
    const out = new Set([...heldOut, ...v].map((t) => t.question));
    expect(trained.filter((q) => out.has(q))).toEqual([]);
    // without the skip the same stream does meet validation questions: the skip is what keeps them out
    const plain = new TaskStream(0, gen, heldOut).next(2000).map((t) => t.question);
    expect(plain.some((q) => v.some((t) => t.question === q))).toBe(true);
  });
});

test('a task whose problems are all held out is refused, not looped on', () => {
  const one = { task: () => ({ question: 'q' }) };
  expect(() => validationTasks(one, 2, 0, [{ question: 'q' }])).toThrow(/found 0 of 2 validation problems that are not held out in 10200 /);
});

describe('splitValidation', () => {
  const rows = Array.from({ length: 50 }, (_, i) => `p${i}`);

  test('a seeded draw of count rows, the rest train, file order kept in each part', () => {
    const s = splitValidation(rows, 10, 3);
    expect(s.validation).toHaveLength(10);
    expect(s.train).toHaveLength(40);
    expect([...s.validation, ...s.train].sort()).toEqual([...rows].sort());
    const idx = (xs: string[]) => xs.map((x) => rows.indexOf(x));
    expect(idx(s.validation)).toEqual([...idx(s.validation)].sort((a, b) => a - b));
    expect(idx(s.train)).toEqual([...idx(s.train)].sort((a, b) => a - b));
    expect(splitValidation(rows, 10, 3)).toEqual(s);
    expect(splitValidation(rows, 10, 4).validation).not.toEqual(s.validation);
  });

  test('a split that leaves nothing to train on is refused, naming the field', () => {
    expect(() => splitValidation(rows, 50, 3)).toThrow(
      expect.objectContaining({ code: 'invalid_config', location: { field: 'validation.problems' } }),
    );
    expect(() => splitValidation(rows, 50, 3)).toThrow(/leaves none of the 50 training problems/);
  });
});
