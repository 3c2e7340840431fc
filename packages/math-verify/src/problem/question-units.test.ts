/**
 * The wrong-unit set drawn from the benchmark questions (tools/fixtures/math-verify/near-misses.mjs writes
 * test/fixtures/question-units.jsonl with its own reading of the unit each question asks): for each question that
 * asks for a unit, the gold's value in another unit of that kind (boxed, after the box, unboxed) and the right
 * answers. The gold names no unit, so without the problem most wrong ones are rewarded; with it none is, and every
 * right one that was rewarded still is.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { mathReward } from '../verify.js';

interface Item {
  kind: 'wrong_unit' | 'right';
  source: string;
  gold: string;
  problem: string;
  asked: string;
  pred: string;
  note: string;
}

const items = readFileSync(fileURLToPath(new URL('../../test/fixtures/question-units.jsonl', import.meta.url)), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Item);
const wrong = items.filter((x) => x.kind === 'wrong_unit');
const right = items.filter((x) => x.kind === 'right');

const rewarded = (xs: Item[], fallbacks: boolean, withProblem: boolean): Item[] =>
  xs.filter((x) => mathReward(x.pred, x.gold, withProblem ? { fallbacks, problem: x.problem } : { fallbacks }).reward === 1);

describe('wrong units drawn from the benchmark questions', () => {
  it('covers the questions of all four benchmarks that ask for a unit', () => {
    expect(new Set(items.map((x) => x.source)).size).toBe(49);
    expect([wrong.length, right.length]).toEqual([219, 147]);
    expect(new Set(items.map((x) => x.source.split(':')[0]))).toEqual(new Set(['math500', 'aime24', 'amc23', 'college_math']));
  });

  it('rewards none of the wrong units with the problem given, by default and with the eval fallbacks', () => {
    const show = (xs: Item[]) => xs.map((x) => `${x.source}: gold ${x.gold}, ${x.pred}`);
    expect(show(rewarded(wrong, false, true))).toEqual([]);
    expect(show(rewarded(wrong, true, true))).toEqual([]);
  });

  it('rewards 132 (default) and 201 (fallbacks) of the 219 without the problem: the false positives it removes', () => {
    expect(rewarded(wrong, false, false)).toHaveLength(132);
    expect(rewarded(wrong, true, false)).toHaveLength(201);
  });

  it('still rewards every right answer it rewarded without the problem', () => {
    for (const fallbacks of [false, true]) {
      const before = rewarded(right, fallbacks, false);
      const after = rewarded(right, fallbacks, true);
      expect(after.map((x) => x.pred + x.source)).toEqual(before.map((x) => x.pred + x.source));
    }
    // Every boxed right answer is rewarded; the unboxed ones need the fallbacks (3 of them read the wrong number).
    expect(rewarded(right, false, true)).toHaveLength(98);
    expect(rewarded(right, true, true)).toHaveLength(144);
  });
});
