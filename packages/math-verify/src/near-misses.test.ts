/**
 * The grader contract (docs/grader-contract.md) on real golds: the adversarial near-miss set built from the shared
 * benchmarks' gold answers (tools/fixtures/math-verify/near-misses.mjs, which checks every item different from its
 * gold by its own arithmetic). Under the default reward options none of them is rewarded, while every gold it was
 * built from is rewarded when answered exactly, so the set tests the grader's discrimination, not unparseable golds.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { mathReward, verifyAnswer } from './verify.js';

interface NearMiss {
  kind: string;
  source: string;
  gold: string;
  answer: string;
  pred: string;
  note: string;
}

const fixture = (name: string): string => fileURLToPath(new URL(`../test/fixtures/${name}`, import.meta.url));
const items = readFileSync(fixture('near-misses.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as NearMiss);
const golds = readFileSync(fixture('benchmark-golds.jsonl'), 'utf8').trim().split('\n');

describe("adversarial near misses from the benchmarks' golds", () => {
  it('has 500+ items of every kind the issue names, from golds of all four benchmarks', () => {
    expect(golds).toHaveLength(770);
    expect(items.length).toBeGreaterThanOrEqual(500);
    const kinds = new Set(items.map((x) => x.kind));
    for (const k of ['off_by_one', 'rounded', 'truncated', 'sign_flipped', 'wrong_unit', 'reordered', 'brackets_swapped'])
      expect(kinds, k).toContain(k);
    expect(new Set(items.map((x) => x.source.split(':')[0]))).toEqual(new Set(['math500', 'aime24', 'amc23', 'college_math']));
  });

  it('rewards none of them under the default reward options', () => {
    const accepted = items.filter((x) => mathReward(x.pred, x.gold).reward === 1);
    expect(accepted.map((x) => `${x.source} ${x.kind}: gold ${x.gold}, answer ${x.answer} (${mathReward(x.pred, x.gold).reason})`)).toEqual(
      [],
    );
  });

  it('calls none of them equal as extracted answers either', () => {
    const equal = items.filter((x) => verifyAnswer(x.gold, x.answer).equal);
    expect(equal.map((x) => `${x.source} ${x.kind}: ${x.gold} vs ${x.answer}`)).toEqual([]);
  });

  it('rewards every gold they were built from when it is answered as written', () => {
    const refused = [...new Set(items.map((x) => x.gold))].filter(
      (g) => mathReward(`so \\boxed{${g.replace(/^\$+|\$+$/g, '')}}`, g).reward !== 1,
    );
    expect(refused).toEqual([]);
  });
});
