// fast-check generators shared by the suite's properties (src/properties.test.ts, src/robustness.test.ts) and the
// long fuzz run (tools/bench/math-verify/fuzz.mjs): hostile LaTeX-like strings, and answers written in canonical
// forms (numbers, expressions, sets, tuples, intervals) for the symmetry property.
import fc from 'fast-check';

/** Strings built from LaTeX fragments, numbers, operators and arbitrary unicode. */
export const latexish = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '\\frac',
        '\\sqrt',
        '\\boxed',
        '\\left(',
        '\\right)',
        '\\pi',
        '\\infty',
        '\\pm',
        '\\cup',
        '\\{',
        '\\}',
        '\\text{',
        '\\begin{pmatrix}',
        '\\end{pmatrix}',
        '\\\\',
        '&',
        '^',
        '_',
        '{',
        '}',
        '(',
        ')',
        '[',
        ']',
        ',',
        ';',
        '=',
        '<',
        '\\le',
        '|',
        '!',
        '%',
        '\\%',
        '$',
        ' ',
        'x',
        'e',
        'i',
        'and',
        '\\sum_{k=1}^{',
        '\\prod_{k=1}^{',
        '\\log_',
        '\\sin',
        '\\circ',
        '\\approx',
        '\\text{ cm}',
        '\\text{ inches}',
        '.',
        '-',
        '+',
        '*',
        '/',
        ':',
        "'",
        '\\def',
        '\\',
        '３',
        ',000',
        '<|im_end|>',
        '</think>',
      ),
      fc.integer({ min: -1000, max: 100000 }).map(String),
      fc.string({ maxLength: 3, unit: 'grapheme' }),
    ),
    { maxLength: 24 },
  )
  .map((parts) => parts.join(''));

const small = fc.integer({ min: -20, max: 20 });
const positive = fc.integer({ min: 1, max: 12 });

/** A number in one of the forms golds and answers are written in. */
export const canonicalNumber = fc.oneof(
  small.map(String),
  fc.tuple(small, positive).map(([a, b]) => `\\frac{${a}}{${b}}`),
  fc.tuple(fc.integer({ min: -99, max: 99 }), fc.integer({ min: 1, max: 3 })).map(([a, k]) => (a / 10 ** k).toFixed(k)),
  fc.tuple(positive, fc.integer({ min: 2, max: 15 })).map(([a, b]) => `${a}\\sqrt{${b}}`),
  positive.map((a) => `${a}\\pi`),
  fc.tuple(small, positive).map(([a, b]) => `${a} + ${b}i`),
);

/** A polynomial in x with small coefficients, expanded or as a product of two factors. */
const polynomial = fc.oneof(
  fc.tuple(small, small, small).map(([a, b, c]) => `${a}x^2 + ${b}x + ${c}`),
  fc.tuple(small, small).map(([a, b]) => `(x + ${a})(x + ${b})`),
  fc.tuple(small, positive).map(([a, b]) => `\\frac{x + ${a}}{${b}}`),
);

/** Answers in canonical forms: numbers, expressions, sets, tuples, intervals. */
export const canonicalAnswer = fc.oneof(
  canonicalNumber,
  polynomial,
  fc.array(canonicalNumber, { minLength: 1, maxLength: 4 }).map((xs) => `\\{${xs.join(', ')}\\}`),
  fc.array(canonicalNumber, { minLength: 2, maxLength: 3 }).map((xs) => `(${xs.join(', ')})`),
  fc
    .tuple(fc.constantFrom('(', '['), small, small, fc.constantFrom(')', ']'))
    .map(([o, a, b, c]) => `${o}${Math.min(a, b)}, ${Math.max(a, b) + 1}${c}`),
);

/** A pair that is often equal: an answer and either another answer or a rewriting of it that keeps its value. */
export const canonicalPair = fc.oneof(
  fc.tuple(canonicalAnswer, canonicalAnswer),
  canonicalAnswer.map((a) => [a, a.replace(/\\frac\{(-?\d+)\}\{(\d+)\}/g, '$1/$2').replace(/(\d)\\pi/g, '$1 \\pi')]),
  canonicalNumber.map((a) => [a, `\\{${a}\\}`]),
);
