/**
 * Properties checked against an independent reference: random expression trees written two equivalent ways
 * (commuted sums and products, \frac vs /, squares vs products) must compare equal, and three times the tree
 * must not. The two renderings share no text, so `same_text` cannot make them pass.
 */
import fc from 'fast-check';
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

  it('is symmetric on numbers and sets', () => {
    const num = fc.oneof(fc.integer({ min: -50, max: 50 }).map(String), fc.constantFrom('\\frac{1}{3}', '0.5', '\\sqrt{3}', '2\\pi', '1.732'));
    fc.assert(
      fc.property(fc.array(num, { minLength: 1, maxLength: 4 }), fc.array(num, { minLength: 1, maxLength: 4 }), (xs, ys) => {
        const a = `\\{${xs.join(', ')}\\}`;
        const b = `\\{${ys.join(', ')}\\}`;
        return verifyAnswer(a, b).equal === verifyAnswer(b, a).equal;
      }),
      { numRuns: 400, seed: 9 },
    );
  });
});
