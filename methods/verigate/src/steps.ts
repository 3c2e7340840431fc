/**
 * Process scores as a source: a completion cut into steps, each with a score and its span, byte-exact
 * in the completion's tokens. `tokens` is half-open `[start, end)` relative to the completion start;
 * steps are contiguous from token 0 (step k starts where step k-1 ends), tokens after the last step
 * carry no process score.
 */
export interface ProcessStep {
  /** [start, end) in the completion's bytes */
  readonly bytes: readonly [number, number];
  /** [start, end) in the completion's tokens: the tokens whose bytes hold the step's bytes */
  readonly tokens: readonly [number, number];
  /** the step's score (1 right, 0 wrong for the exact checker; a probability for a PRM) */
  readonly score: number;
}

/**
 * What a process-score source reads of one completion: the bytes of each of its tokens, in order,
 * and the problem it answers (a PRM scores the steps given the problem; the exact checker ignores it).
 */
export interface StepCompletion {
  readonly tokenBytes: readonly Uint8Array[];
  /** the problem text (`questionOf` the decoded prompt, in the `process-steps` backend) */
  readonly question?: string;
}

/**
 * A source of process scores: segments each completion into steps and scores every step, one list
 * per completion in order. May answer with a promise (a reward model behind HTTP); a synchronous
 * source (the exact checker) returns the lists directly.
 */
export interface ProcessScorer {
  readonly name: string;
  score(completions: readonly StepCompletion[]): ProcessStep[][] | Promise<ProcessStep[][]>;
}

/** A `ProcessScorer` that answers at once (no promise). */
export interface SyncProcessScorer extends ProcessScorer {
  score(completions: readonly StepCompletion[]): ProcessStep[][];
}

/** The completion's bytes, its tokens' bytes concatenated. */
export function completionBytes(c: StepCompletion): Buffer {
  return Buffer.concat(c.tokenBytes.map((t) => Buffer.from(t.buffer, t.byteOffset, t.length)));
}

/** The token that holds byte `b` (the first token ending after it); `ends[t]` is token t's end byte. */
function tokenAt(ends: readonly number[], b: number): number {
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid]! > b) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Steps from byte cut points: `cuts` are increasing step-end bytes, `scores` one per cut. A cut inside
 * a token moves to that token's end, so each step's token span covers its bytes exactly; a step that
 * ends in the token of the previous step is merged into it (its score replaces the previous one's: the
 * later statement decides).
 */
export function stepsFromCuts(c: StepCompletion, cuts: readonly number[], scores: readonly number[]): ProcessStep[] {
  const ends: number[] = [];
  let b = 0;
  for (const t of c.tokenBytes) {
    b += t.length;
    ends.push(b);
  }
  const steps: ProcessStep[] = [];
  let tok = 0;
  let byte = 0;
  cuts.forEach((cut, k) => {
    const t = Math.min(tokenAt(ends, cut - 1) + 1, ends.length);
    const end = t > 0 ? ends[t - 1]! : 0;
    if (t <= tok && steps.length > 0) {
      const last = steps.pop()!;
      steps.push({ bytes: last.bytes, tokens: last.tokens, score: Math.min(last.score, scores[k]!) });
      return;
    }
    steps.push({ bytes: [byte, end], tokens: [tok, t], score: scores[k]! });
    tok = t;
    byte = end;
  });
  return steps;
}

// a number: plain (`482`) or one digit at a time (`4 8 2`, the long-chain task's lines): single digits joined by single spaces
const NUMBER = String.raw`-?(?:\d(?: \d)+|\d+)`;
const EQUATION = new RegExp(String.raw`(${NUMBER})\s*([+\-*/])\s*(${NUMBER})\s*=\s*(${NUMBER})`, 'g');
const value = (n: string) => Number(n.replaceAll(' ', ''));

/**
 * The exact step checker of the synthetic tasks (`a op b = c` per line, then `\boxed{c}`; numbers plain or
 * spaced digit by digit, as the long-chain task writes them): every equation the completion states is a step,
 * ending after its `c`, scored 1 when `a op b` is `c` exactly, 0 otherwise.
 */
export const arithmeticChecker: SyncProcessScorer = {
  name: 'arithmetic',
  score: (completions) =>
    completions.map((c) => {
      const text = completionBytes(c).toString('latin1'); // one char per byte: indices are byte offsets
      const cuts: number[] = [];
      const scores: number[] = [];
      for (const m of text.matchAll(EQUATION)) {
        const [a, op, b, r] = [value(m[1]!), m[2]!, value(m[3]!), value(m[4]!)];
        const v = op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : a / b;
        cuts.push(m.index + m[0].length);
        scores.push(v === r ? 1 : 0);
      }
      return stepsFromCuts(c, cuts, scores);
    }),
};

/** Steps as a per-rollout signal `[B, 2K]`: (token end, score) pairs, padded with (-1, 0); K >= 1. */
export function stepSignal(steps: readonly (readonly ProcessStep[])[]): { values: Float32Array; width: number } {
  const K = Math.max(1, ...steps.map((s) => s.length));
  const values = new Float32Array(steps.length * 2 * K);
  steps.forEach((s, i) => {
    for (let k = 0; k < K; k++) {
      values[(i * K + k) * 2] = k < s.length ? s[k]!.tokens[1] : -1;
      values[(i * K + k) * 2 + 1] = k < s.length ? s[k]!.score : 0;
    }
  });
  return { values, width: 2 * K };
}
