/**
 * Properties checked against an independent reference: random expression trees written two equivalent ways
 * (commuted sums and products, \frac vs /, squares vs products) must compare equal, and three times the tree
 * must not. The two renderings share no text, so `same_text` cannot make them pass.
 */
import fc from 'fast-check';
import { canonicalPair } from '../test/fuzz-arbitraries.mjs';
import { describe, expect, it } from 'vitest';
import { verifyAnswer } from './verify.js';

interface Pair {
  a: string;
  b: string;
}

const leaf: fc.Arbitrary<Pair> = fc.oneof(
  fc.integer({ min: 1, max: 30 }).map((n) => ({ a: String(n), b: `\\frac{${2 * n}}{2}` })),
  fc.constantFrom<Pair>({ a: 'x', b: '(x)' }, { a: 'y', b: '(y)' }, { a: '\\pi', b: '(\\pi)' }, { a: '\\sqrt{2}', b: '2^{1/2}' }),
);

const { expr } = fc.letrec<{ expr: Pair }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.tuple(tie('expr'), tie('expr')).map(([p, q]) => ({ a: `(${p.a}+${q.a})`, b: `(${q.b}+${p.b})` })),
    fc.tuple(tie('expr'), tie('expr')).map(([p, q]) => ({ a: `${p.a}\\cdot ${q.a}`, b: `(${q.b})(${p.b})` })),
    fc.tuple(tie('expr'), tie('expr')).map(([p, q]) => ({ a: `\\frac{${p.a}}{${q.a}}`, b: `(${p.b})/(${q.b})` })),
    tie('expr').map((p) => ({ a: `(${p.a})^{2}`, b: `(${p.b})(${p.b})` })),
  ),
}));

describe('equivalence properties', () => {
  it('two renderings of the same random expression are equal', () => {
    fc.assert(
      fc.property(expr, ({ a, b }) => {
        const r = verifyAnswer(a, b);
        if (!r.equal) throw new Error(`${a} vs ${b}: ${r.reason}`);
        expect(r.reason).not.toBe('same_text');
      }),
      { numRuns: 400, seed: 7 },
    );
  });

  it('three times the value is a different value', () => {
    fc.assert(
      fc.property(expr, ({ a, b }) => {
        const r = verifyAnswer(a, `3(${b})`);
        if (r.equal) throw new Error(`${a} vs 3(${b}) called equal: ${r.reason}`);
      }),
      { numRuns: 400, seed: 8 },
    );
  });

  it('is symmetric on canonical forms: numbers, expressions, sets, tuples, intervals', () => {
    let equal = 0;
    fc.assert(
      fc.property(canonicalPair, ([a, b]) => {
        const ab = verifyAnswer(a, b);
        if (ab.equal) equal++;
        if (ab.equal !== verifyAnswer(b, a).equal) throw new Error(`${a} vs ${b}: ${ab.reason}, reversed: ${verifyAnswer(b, a).reason}`);
      }),
      { numRuns: 600, seed: 9 },
    );
    expect(equal).toBeGreaterThan(150); // the property is not vacuous: many pairs are equal
  });
});
