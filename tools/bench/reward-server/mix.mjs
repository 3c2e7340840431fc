// Batches of completions for the reward-server load test: easy answers, symbolic ones, wrong ones, no answer, and a
// few pathological ones (twenty-four 2,000-term sums of k^k: about 4 s each in-process, so they always hit the timeout).
// Every batch carries its own numbers, so a reply sent to the wrong request or out of order cannot match.

const SUM = '\\sum_{k=1}^{2000} k^{k}';
const MANY = Array(24).fill(SUM).join(' + ');
export const PATHOLOGICAL = [
  { completion: `The total is \\boxed{${MANY}}`, gold: '1' },
  { completion: `So the answer is \\boxed{2 + ${MANY}}`, gold: '3' },
];

const SYMBOLIC = [
  ['so we get \\boxed{\\frac{1}{2}}', '0.5'],
  ['Thus \\boxed{(x+1)^2}', 'x^2+2x+1'],
  ['\\boxed{\\frac{\\sqrt{2}}{2}}', '\\frac{1}{\\sqrt{2}}'],
  ['the interval is \\boxed{[0, 1)}', '[0,1)'],
  ['\\boxed{\\{1, 2, 3\\}}', '\\{3,2,1\\}'],
  ['\\boxed{50\\%}', '\\frac{1}{2}'],
  ['\\boxed{x = 5}', '5'],
  ['\\boxed{\\pi}', '3.14159'],
  ['\\boxed{\\dfrac{3}{4}}', '0.75'],
  ['\\boxed{2\\sqrt{3}}', '\\sqrt{12}'],
  ['\\boxed{\\binom{5}{2}}', '10'],
  ['\\boxed{a^2 - b^2}', '(a-b)(a+b)'],
];

/** Filler reasoning so completions have a realistic length (~600 characters). */
const REASONING = 'We first simplify the expression and then check each case carefully. '.repeat(9);

/**
 * One batch: `size` items, `slow` of them pathological, spread out. Item kinds cycle: easy right, easy wrong,
 * symbolic, no answer. Returns parallel arrays of prompts, completions (without the prompt) and golds.
 */
export function makeBatch(seed, size, slow) {
  const prompts = [];
  const completions = [];
  const golds = [];
  const slowAt = new Set(Array.from({ length: slow }, (_, k) => Math.floor(((k + 0.5) * size) / slow)));
  for (let i = 0; i < size; i++) {
    const n = seed * 1000 + i;
    prompts.push(`<|im_start|>user\nProblem ${n}: compute it.<|im_end|>\n<|im_start|>assistant\n`);
    let c;
    let g;
    if (slowAt.has(i)) ({ completion: c, gold: g } = PATHOLOGICAL[i % PATHOLOGICAL.length]);
    else if (i % 4 === 0) [c, g] = [`${REASONING}Hence the answer is \\boxed{${n}}.`, String(n)];
    else if (i % 4 === 1) [c, g] = [`${REASONING}Hence the answer is \\boxed{${n}}.`, String(n + 1)];
    else if (i % 4 === 2) {
      const [sc, sg] = SYMBOLIC[(seed + i) % SYMBOLIC.length];
      [c, g] = [`${REASONING}${sc}`, sg];
    } else [c, g] = [`${REASONING}I could not finish; maybe ${n}.`, String(n)];
    completions.push(c);
    golds.push(g);
  }
  return { prompts, completions, golds };
}
