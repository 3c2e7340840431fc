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
