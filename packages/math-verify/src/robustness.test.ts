/**
 * The pure verifier on hostile input: the pathological cases of the issue come back (no hang, no throw) with a
 * verdict that is not a false positive, and random LaTeX-like strings never throw.
 * (Wall-clock limits are enforced by the pool, see pool.test.ts; no timing is asserted here.)
 */
import fc from 'fast-check';
import { latexish } from '../test/fuzz-arbitraries.mjs';
import { describe, expect, it } from 'vitest';
import { mathReward, verifyAnswer } from './verify.js';

const PATHOLOGICAL: [string, string, string][] = [
  ['power tower', '\\boxed{5^{5^{5^5}}}', '5'],
  ['power tower + 1', '\\boxed{5^{5^{5^5}}+1}', '5^{5^{5^5}}'],
  ['10^{10^{10}}', '\\boxed{10^{10^{10}}}', '10^{10^{10}}+1'],
  ['(2+sqrt3)^1000', '\\boxed{(2+\\sqrt{3})^{1000}}', '13'],
  ['Math-Verify #65', '\\boxed{\\dfrac{5^{\\left(5^{\\left(5^{\\left(5^5\\right)}\\right)} - 4\\right)} - 5}{16}}', '1'],
  ['10,000 nested braces', `\\boxed{${'{'.repeat(10_000)}5${'}'.repeat(10_000)}}`, '5'],
  ['10,000 nested parentheses', `\\boxed{${'('.repeat(10_000)}5${')'.repeat(10_000)}}`, '5'],
  ['unbalanced braces', '\\boxed{\\frac{1}{2', '1/2'],
  ['\\def macro', '\\def\\x{\\x\\x}\\boxed{\\x}', '1'],
  ['unicode', '\\boxed{\u{1F600}\u0300\uFFFD\uD800 \u202E}', '5'],
  ['huge factorial', '\\boxed{3000!}', '3000!+1'],
  ['many \\pm', `\\boxed{${'\\pm 1'.repeat(50)}}`, '1'],
  ['140,000 open boxes', '\\boxed{'.repeat(140_000), '5'],
  ['400,000 open display maths', '\\['.repeat(400_000), '5'],
  ['70,000 anchors', 'final answer '.repeat(70_000), '5'],
];

describe('pathological inputs (pure function)', () => {
  it.each(PATHOLOGICAL)('%s returns a verdict and no false positive', (_name, completion, gold) => {
    for (const fallbacks of [false, true]) {
      const r = mathReward(completion, gold, { fallbacks });
      expect(r.reward).toBe(0);
      expect(typeof r.reason).toBe('string');
    }
  });

  it('a 1 MB and a 5 MB completion are read at their end (the final box), never refused, never hung', () => {
    const big = 'x '.repeat(524_288) + '\\boxed{5}';
    expect(big.length).toBeGreaterThan(1_048_576);
    expect(mathReward(big, '5')).toMatchObject({ reward: 1, extracted: '5', answer: { contentStart: 1_048_583 } });
    expect(mathReward(big + ' .', '5', { fallbacks: true }).reward).toBe(1);
    expect(mathReward(big, '5', { maxCompletionChars: 100_000 })).toMatchObject({ reward: 1, extracted: '5' });
    expect(mathReward('\\boxed{4} ' + 'y'.repeat(5_000_000) + ' \\boxed{5}', '4').reward).toBe(0);
  });
});

describe('fuzz', () => {
  // A small version of tools/bench/math-verify/fuzz.mjs (100,000 strings, in-process and through the pool), sized for a loaded machine.
  it('2,000 random LaTeX-like pairs: no exception, a boolean verdict, and a string is equal to itself', () => {
    let checked = 0;
    fc.assert(
      fc.property(latexish, latexish, (a, b) => {
        const r = verifyAnswer(a, b);
        const m = mathReward(a, b, { fallbacks: true });
        checked++;
        // A boolean verdict with a reason; never "equal" because both sides failed to parse.
        return (
          typeof r.equal === 'boolean' &&
          typeof r.reason === 'string' &&
          (m.reward === 0 || m.reward === 1) &&
          !(r.equal && r.reason.includes('unparseable')) &&
          (a === b || !r.equal || r.reason !== 'same_text' || r.gold === r.pred)
        );
      }),
      { numRuns: 2_000, seed: 20251202 },
    );
    expect(checked).toBe(2_000);
  });
});
