import { describe, expect, it } from 'vitest';
import { Rng } from '@rlvr/core';
import { pickToken } from './token-sampling.js';

const LOGITS = [2, 1, 0.5, 3, -1, 3]; // ids 3 and 5 tie for the top

/** Empirical frequencies of `draws` picks. */
function freqs(p: { temperature: number; topK: number; topP: number }, draws = 40_000): number[] {
  const rng = new Rng(9);
  const f = new Array<number>(LOGITS.length).fill(0);
  for (let i = 0; i < draws; i++) f[pickToken(LOGITS, p, rng).id]! += 1 / draws;
  return f;
}

/** softmax(logits / T) restricted to `keep` ids, renormalised (hand reference). */
function expected(T: number, keep: number[]): number[] {
  const w = LOGITS.map((x, i) => (keep.includes(i) ? Math.exp(x / T) : 0));
  const z = w.reduce((s, x) => s + x, 0);
  return w.map((x) => x / z);
}

describe('pickToken', () => {
  it('greedy picks the first maximum and reports the T = 1 log-prob', () => {
    const r = pickToken(LOGITS, { temperature: 0, topK: 0, topP: 1 }, new Rng(1));
    const z = LOGITS.reduce((s, x) => s + Math.exp(x), 0);
    expect(r.id).toBe(3);
    expect(r.logprob).toBeCloseTo(3 - Math.log(z), 12);
  });

  it('samples softmax(logits / T) and reports log-softmax(logits / T) over the whole vocabulary', () => {
    const p = { temperature: 0.7, topK: 0, topP: 1 };
    const f = freqs(p);
    expected(0.7, [0, 1, 2, 3, 4, 5]).forEach((q, i) => expect(Math.abs(f[i]! - q)).toBeLessThan(0.01));
    const rng = new Rng(3);
    const r = pickToken(LOGITS, p, rng);
    const z = LOGITS.reduce((s, x) => s + Math.exp(x / 0.7), 0);
    expect(r.logprob).toBeCloseTo(LOGITS[r.id]! / 0.7 - Math.log(z), 12);
  });

  it('top-k keeps the k most likely ids (ties by lower id), and the log-prob stays the untruncated one', () => {
    // k = 2: ids 3 and 5 (tied); k = 3 adds id 0
    const f2 = freqs({ temperature: 1, topK: 2, topP: 1 });
    expected(1, [3, 5]).forEach((q, i) => expect(Math.abs(f2[i]! - q)).toBeLessThan(0.01));
    const f3 = freqs({ temperature: 1, topK: 3, topP: 1 });
    expected(1, [0, 3, 5]).forEach((q, i) => expect(Math.abs(f3[i]! - q)).toBeLessThan(0.01));
    const r = pickToken(LOGITS, { temperature: 1, topK: 1, topP: 1 }, new Rng(1));
    expect(r.id).toBe(3);
    const z = LOGITS.reduce((s, x) => s + Math.exp(x), 0);
    expect(r.logprob).toBeCloseTo(3 - Math.log(z), 12);
  });

  it('top-p keeps the smallest prefix of sorted ids whose mass reaches p, after top-k', () => {
    const q = expected(1, [0, 1, 2, 3, 4, 5]);
    // sorted: 3, 5, 0, 1, 2, 4 ; cumulative of 3 and 5 = q3 + q5
    const two = q[3]! + q[5]!;
    const f = freqs({ temperature: 1, topK: 0, topP: two - 1e-6 });
    expected(1, [3, 5]).forEach((x, i) => expect(Math.abs(f[i]! - x)).toBeLessThan(0.01));
    const g = freqs({ temperature: 1, topK: 0, topP: two + 1e-6 });
    expected(1, [3, 5, 0]).forEach((x, i) => expect(Math.abs(g[i]! - x)).toBeLessThan(0.01));
    // after top-k 3 the nucleus is computed on the renormalised three: 0.9 of it needs all three
    const h = freqs({ temperature: 1, topK: 3, topP: 0.9 });
    expected(1, [0, 3, 5]).forEach((x, i) => expect(Math.abs(h[i]! - x)).toBeLessThan(0.01));
  });

  it('top-p on a large vocabulary draws exactly what a full sort would (the pre-filter drops no nucleus id)', () => {
    // sized for a busy machine (issue 13): about 0.3 M token picks' worth of work in all
    const V = 1000;
    const rng0 = new Rng(8);
    for (const scale of [0.01, 1, 4]) {
      const logits = Float32Array.from({ length: V }, () => rng0.normal() * scale);
      // reference nucleus by a full sort
      const order = Array.from({ length: V }, (_, i) => i).sort((a, b) => logits[b]! - logits[a]! || a - b);
      const w = order.map((i) => Math.exp(logits[i]!));
      const z = w.reduce((s, x) => s + x, 0);
      let cum = 0;
      let m = 0;
      while (m < V) {
        cum += w[m]!;
        m++;
        if (cum >= 0.9 * z) break;
      }
      const nucleus = new Set(order.slice(0, m));
      const rng = new Rng(2);
      const seen = new Set<number>();
      for (let i = 0; i < (m <= 50 ? 2000 : 100); i++) seen.add(pickToken(logits, { temperature: 1, topK: 0, topP: 0.9 }, rng).id);
      expect([...seen].filter((id) => !nucleus.has(id))).toEqual([]);
      if (m <= 50) expect(seen.size).toBe(m); // a small nucleus: every member gets drawn
    }
  });

  it('the same seed gives the same draws; the large-vocabulary top-k path equals the sort path', () => {
    const V = 5000;
    const rng0 = new Rng(4);
    const logits = Float32Array.from({ length: V }, () => rng0.normal() * 2);
    const run = (k: number, seed: number) => {
      const rng = new Rng(seed);
      return Array.from({ length: 50 }, () => pickToken(logits, { temperature: 1, topK: k, topP: 0.95 }, rng).id);
    };
    expect(run(10, 1)).toEqual(run(10, 1));
    expect(run(10, 1)).not.toEqual(run(10, 2));
    // k = 10 keeps a buffer; k = V/4 sorts everything: both keep the same top 10
    const byBuffer = new Set(run(10, 5));
    const top10 = Array.from({ length: V }, (_, i) => i)
      .sort((a, b) => logits[b]! - logits[a]!)
      .slice(0, 10);
    for (const id of byBuffer) expect(top10).toContain(id);
  });
});
