/**
 * A seeded synthetic frozen batch for the credit metrics: groups of 8 rollouts of 60-200 tokens, about 60% wrong,
 * labelled with first errors (some unlabelled, some on the first line), and three methods built by `creditMap`:
 * `uniform` (weights 1), `blame` (weights raised on the error line and after, with noise) and `gate` (no weights;
 * sequence advantage 0 in every group whose rollouts are all wrong or all right, like VeriGate's).
 */
import { Rng } from '@rlvr/core';
import { creditMap } from '../credit/credit-map.js';
import type { CreditInput, CreditRollout } from '../credit/input.js';

export function syntheticCredit(rolloutCount: number, seed = 1): CreditInput {
  const rng = new Rng(seed);
  const rollouts: CreditRollout[] = [];
  for (let i = 0; i < rolloutCount; i++) {
    const tokens = 60 + rng.int(141);
    const correct = rng.float() < 0.4;
    let label: CreditRollout['label'] = 'correct';
    if (!correct) {
      const u = rng.float();
      const start = u < 0.1 ? 0 : 1 + rng.int(tokens - 30);
      label = u > 0.93 ? 'unlabelled' : { kind: u < 0.5 ? 'arithmetic' : 'copy', tokenStart: start, tokenEnd: start + 3 + rng.int(12) };
    }
    rollouts.push({ index: i, group: Math.floor(i / 8), correct, label, tokens });
  }
  const offsets = new Int32Array(rolloutCount + 1);
  rollouts.forEach((r, i) => (offsets[i + 1] = offsets[i]! + r.tokens));
  const T = offsets[rolloutCount]!;
  // group-relative sequence advantages from the rewards (GRPO without the std), 0 in all-equal groups
  const seq = new Float64Array(rolloutCount);
  for (let g = 0; g * 8 < rolloutCount; g++) {
    const members = rollouts.slice(g * 8, g * 8 + 8);
    const mean = members.reduce((a, r) => a + (r.correct ? 1 : 0), 0) / members.length;
    members.forEach((r, k) => (seq[g * 8 + k] = (r.correct ? 1 : 0) - mean));
  }
  const correct = rollouts.map((r) => r.correct);
  const ones = new Float32Array(T).fill(1);
  const blameW = new Float32Array(T);
  const gateAdv = new Float32Array(T);
  rollouts.forEach((r, i) => {
    const o = offsets[i]!;
    for (let t = 0; t < r.tokens; t++) {
      const hot = typeof r.label === 'object' && t >= r.label.tokenStart && t < r.label.tokenEnd;
      const w = Math.max(0.1, 1 + 0.4 * rng.normal() + (hot ? 0.8 : 0) + 0.3 * Math.cos((2 * Math.PI * t) / r.tokens));
      blameW[o + t] = w;
      gateAdv[o + t] = seq[i] !== 0 ? seq[i]! * (1 + 0.2 * rng.normal()) : (t % 20 < 10 ? -1 : 1) * (1 + (hot ? 1 : 0));
    }
  });
  const times = (w: Float32Array) => Float32Array.from(w, (x, t) => x * seqOf(t));
  const owner = new Int32Array(T);
  for (let i = 0; i < rolloutCount; i++) owner.fill(i, offsets[i]!, offsets[i + 1]!);
  const seqOf = (t: number) => seq[owner[t]!]!;
  return {
    rollouts,
    methods: [
      creditMap('uniform', { advantages: times(ones), sequenceAdvantages: seq, weights: ones, offsets, correct }),
      creditMap('blame', { advantages: times(blameW), sequenceAdvantages: seq, weights: blameW, offsets, correct }),
      creditMap('gate', { advantages: gateAdv, sequenceAdvantages: seq, offsets, correct }),
    ],
  };
}
