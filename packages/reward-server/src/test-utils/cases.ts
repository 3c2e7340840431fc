/**
 * Completions and gold answers for the server tests: easy, symbolic, wrong, unanswered and a few slow ones, each
 * with a prompt that the query starts with. `expected` values are the hand-checked rewards of the verifier.
 */
export interface Case {
  prompt: string;
  completion: string;
  gold: string;
  /** hand-checked reward (null: not checked by hand, compared with in-process mathReward only) */
  expected: 0 | 1 | null;
}

const SUM = '\\sum_{k=1}^{2000} k^{k}';
/** A genuinely slow item: four 2,000-term sums of k^k (over a second in-process; reward 0 when it finishes). */
export const SLOW = `\\boxed{${[SUM, SUM, SUM, SUM].join(' + ')}}`;
/**
 * Twelve times that: for tests that need an item to outlast the 800 ms budget with a wide margin
 * on a fast, idle machine too (about 1.8 s there; 8 sums took only 0.4 s and made tests flaky).
 */
export const SLOWER = `\\boxed{${Array(48).fill(SUM).join(' + ')}}`;

const PAIRS: [string, string, 0 | 1][] = [
  ['The answer is \\boxed{2}.', '2', 1],
  ['so we get \\boxed{\\frac{1}{2}}', '0.5', 1],
  ['Thus \\boxed{(x+1)^2}', 'x^2+2x+1', 1],
  ['\\boxed{\\frac{\\sqrt{2}}{2}}', '\\frac{1}{\\sqrt{2}}', 1],
  ['the interval is \\boxed{[0, 1)}', '[0,1)', 1],
  ['\\boxed{3}', '4', 0],
  ['I think it is 7 but I am not sure', '7', 0],
  ['\\boxed{\\{1, 2, 3\\}}', '\\{3,2,1\\}', 1],
  ['\\boxed{50\\%}', '\\frac{1}{2}', 1],
  ['\\boxed{x = 5}', '5', 1],
  // a gold that states its rounding (math-verify rewards no rounded value otherwise: docs/grader-contract.md)
  ['\\boxed{\\pi}', '\\approx 3.14159', 1],
  ['\\boxed{\\dfrac{3}{4}}', '0.75', 1],
];

export function makeCases(n: number, slowEvery = 0, slow = SLOW): Case[] {
  const out: Case[] = [];
  for (let i = 0; i < n; i++) {
    const prompt = `<|im_start|>user\nProblem ${i}: solve it.<|im_end|>\n<|im_start|>assistant\n`;
    if (slowEvery > 0 && i % slowEvery === slowEvery - 1) {
      out.push({ prompt, completion: `Let me add these. ${slow}`, gold: '1', expected: 0 });
      continue;
    }
    const [completion, gold, expected] = PAIRS[i % PAIRS.length]!;
    // The item's own number keeps replies distinguishable, so an out-of-order answer cannot pass by accident.
    const own = i % 3 === 0;
    out.push(
      own
        ? { prompt, completion: `step ${i}: \\boxed{${i}}`, gold: String(i % 2 === 0 ? i : i + 1), expected: i % 2 === 0 ? 1 : 0 }
        : { prompt, completion, gold, expected },
    );
  }
  return out;
}

export const body = (cases: Case[]) => ({
  query: cases.map((c) => c.prompt + c.completion),
  prompts: cases.map((c) => c.prompt),
  labels: cases.map((c) => c.gold),
});
