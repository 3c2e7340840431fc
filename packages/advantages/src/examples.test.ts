import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The README's usage example must keep running (against the built package).
describe('examples/usage.mjs', { timeout: 300_000 }, () => {
  it('runs and prints GRAIL advantages and weights', () => {
    const script = fileURLToPath(new URL('../examples/usage.mjs', import.meta.url));
    const lines = execFileSync(process.execPath, [script], { encoding: 'utf8' }).trim().split('\n');
    expect(lines).toHaveLength(3);
    const advantages = lines[0]!.split(' ').map(Number);
    const weights = lines[1]!.split(' ').map(Number);
    expect(advantages).toHaveLength(11);
    // Dr. GRPO: +0.5 and -0.5; content tokens (3, and 6 + 2) get wMax = 5
    expect(advantages[3]).toBe(2.5);
    expect(advantages[8]).toBe(-2.5);
    expect(weights[3]).toBe(5);
    advantages.forEach((a, t) => expect(a).toBeCloseTo((t < 6 ? 0.5 : -0.5) * weights[t]!, 2));
  });
});

describe('examples/spans.mjs', { timeout: 300_000 }, () => {
  it('locates the answer spans from token strings and weights them with GRAIL, without tfjs', () => {
    const script = fileURLToPath(new URL('../examples/spans.mjs', import.meta.url));
    const lines = execFileSync(process.execPath, [script], { encoding: 'utf8' }).trim().split('\n');
    // `Ġ\\` holds the backslash: open covers it through `{`; the digits are content; `}` closes
    expect(JSON.parse(lines[0]!)).toEqual([
      { open: [1, 4], content: [4, 6], close: [6, 7] },
      { open: [2, 5], content: [5, 6], close: [6, 7] },
    ]);
    const weights = lines[1]!.split(' ').map(Number);
    // answer content -> wMax 5; delimiters and the post-answer token -> the mean weight 1
    expect([weights[4], weights[5], weights[13]]).toEqual([5, 5, 5]);
    expect([weights[1], weights[6], weights[7], weights[10], weights[14]]).toEqual([1, 1, 1, 1, 1]);
    const advantages = lines[2]!.split(' ').map(Number);
    advantages.forEach((a, t) => expect(a).toBeCloseTo((t < 8 ? 0.5 : -0.5) * weights[t]!, 2));
  });
});
