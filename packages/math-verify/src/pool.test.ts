/**
 * The worker pool, loaded from the built package (`dist/worker.js` is what piscina starts), with real threads.
 * Timeouts are provoked with a genuinely slow item (a sum of 2,001 factorials up to 3000!: seconds in-process).
 */
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MathVerifyError, VerifierPool, mathReward } from '@rlvr/math-verify';
import { loadCorpus, profileFor } from '../test/corpus-profile.mjs';

const SLOW = '\\boxed{\\sum_{k=1000}^{3000} k!}';
const rows = loadCorpus(fileURLToPath(new URL('../test/fixtures/math-verify-cases.jsonl', import.meta.url)));

describe('VerifierPool', () => {
  const pool = new VerifierPool({ concurrency: 2, timeoutMs: 5_000 });
  afterAll(() => pool.close());

  it('gives the same verdicts as the in-process function', async () => {
    const sample = rows.filter((_r, i) => i % 5 === 0).map((r) => ({ r, p: profileFor(r) })).filter((x) => x.p.call === 'reward' && !x.p.wrapGold);
    expect(sample.length).toBeGreaterThan(40);
    const got = await Promise.all(sample.map(({ r, p }) => pool.reward(r.pred, r.gold, p.options)));
    expect(got).toEqual(sample.map(({ r, p }) => mathReward(r.pred, r.gold, p.options)));
    const v = await pool.verify('\\frac{1}{2}', '0.5');
    expect(v).toEqual({ equal: true, reason: 'exact', gold: '1/2', pred: '0.5' });
  });

  it('answers pathological inputs within the budget', async () => {
    const cases: [string, string][] = [
      ['\\boxed{5^{5^{5^5}}}', '5'],
      ['\\boxed{10^{10^{10}}}', '10^{10^{10}}+1'],
      ['\\boxed{(2+\\sqrt{3})^{1000}}', '13'],
      [`\\boxed{${'{'.repeat(10_000)}5${'}'.repeat(10_000)}}`, '5'],
      ['x'.repeat(999_000) + '\\boxed{4}', '5'],
      ['\\boxed{\\frac{1}{2', '1/2'],
      ['\\def\\x{\\x\\x}\\boxed{\\x}', '1'],
      ['\\boxed{\u{1F600}\uD800}', '5'],
    ];
    const got = await pool.rewardBatch(cases.map((c) => c[0]), cases.map((c) => c[1]));
    expect(got.map((r) => r.reward)).toEqual(cases.map(() => 0));
    expect(got.every((r) => r.reason !== 'timeout')).toBe(true);
  });
});

describe('VerifierPool timeouts', () => {
  it('terminates a stuck worker, answers "timeout", and keeps serving the items behind it', async () => {
    const pool = new VerifierPool({ concurrency: 2, timeoutMs: 100 });
    try {
      const completions = [SLOW, ...Array.from({ length: 20 }, (_, i) => `\\boxed{${i}}`), SLOW, SLOW, ...Array.from({ length: 20 }, (_, i) => `\\boxed{${i + 100}}`)];
      const golds = completions.map((c) => (c === SLOW ? '1' : c.slice(7, -1)));
      const got = await pool.rewardBatch(completions, golds);
      got.forEach((r, i) => {
        if (completions[i] === SLOW) expect(r).toEqual({ reward: 0, extracted: null, reason: 'timeout' });
        else expect(r.reward).toBe(1);
      });
      expect(pool.stats.timedOut).toBe(3);
      expect(pool.stats.completed).toBe(40);
      const v = await pool.verify('1', '\\sum_{k=1000}^{3000} k!');
      expect(v).toEqual({ equal: false, reason: 'timeout', gold: null, pred: null });
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('rejects calls after close and invalid options with typed errors', async () => {
    const pool = new VerifierPool({ concurrency: 1 });
    await pool.close();
    await expect(pool.reward('\\boxed{1}', '1')).rejects.toMatchObject({ code: 'pool_closed' });
    expect(() => new VerifierPool({ concurrency: 0 })).toThrow(MathVerifyError);
    expect(() => new VerifierPool({ timeoutMs: -1 })).toThrow(/timeoutMs/);
  });
});
