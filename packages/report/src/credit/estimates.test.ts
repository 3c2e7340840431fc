import { describe, expect, test } from 'vitest';
import { creditLabel, creditOfEstimates } from './estimates.js';
import { formatCreditTable } from './table.js';
import type { EstimatorOutput } from './estimates.js';

// two groups of two rollouts: group 0 one right one wrong, group 1 both wrong (GRPO's sequence advantage 0)
const offsets = Int32Array.from([0, 4, 8, 12, 16]);
const correct = [true, false, false, false];
const labels = [
  { kind: 'correct', correctSteps: 2, tokens: [0, 4] as const },
  { kind: 'arithmetic', correctSteps: 1, tokens: [2, 3] as const },
  { kind: 'copy', correctSteps: 1, tokens: [1, 3] as const },
  { kind: 'unlabelled', correctSteps: 0, tokens: null },
];
const baseline = [1, -1, 0, 0];
const ones = new Float32Array(16).fill(1);

describe('creditOfEstimates', () => {
  test('labels map as the README says; unlabelled and token-less lines are counted as unlabelled', () => {
    expect(creditLabel(labels[0]!)).toBe('correct');
    expect(creditLabel(labels[1]!)).toEqual({ kind: 'arithmetic', tokenStart: 2, tokenEnd: 3, correctSteps: 1 });
    expect(creditLabel(labels[3]!)).toBe('unlabelled');
    expect(creditLabel({ kind: 'missing_step', correctSteps: 2, tokens: null })).toBe('unlabelled');
  });

  test('composed: credit is the weight; others: advantage over the sequence advantage; no own sequence advantage: the baseline', () => {
    const weights = Float32Array.from({ length: 16 }, (_, t) => 1 + (t % 4));
    const composed: EstimatorOutput = {
      name: 'grail',
      advantages: Float32Array.from(weights, (w, t) => w * baseline[Math.floor(t / 4)]!),
      weights,
      sequenceAdvantages: baseline,
      composed: true,
    };
    // a rewriting method with its base's sequence advantages and all-1 weights passed through (GAR, entropy shaping)
    const rewritten: EstimatorOutput = { ...composed, name: 'gar', weights: ones, composed: false };
    // a method reporting none (VeriGate): process scores in the all-wrong group, sequence advantages the rollout means
    const gated = Float32Array.from(composed.advantages);
    gated.set([0.5, -0.5, -1, 0.2], 8);
    const means = [0, 4, 8, 12].map((s) => gated.subarray(s, s + 4).reduce((a, b) => a + b, 0) / 4);
    const verigate: EstimatorOutput = { name: 'verigate', advantages: gated, weights: ones, sequenceAdvantages: means, composed: false };
    const report = creditOfEstimates(
      { offsets, groupIndex: [0, 0, 1, 1], correct, labels, estimates: [composed, rewritten, verigate], baseline },
      { resamples: 100 },
    );
    expect(report.counts.status).toMatchObject({ correct: 1, scored: 2, unlabelled: 1 });
    const [g, r, v] = report.methods;
    // rollout 1: weights 1..4, error token 2 (weight 3) against prefix 1, 2: AUROC 1
    expect(report.values.grail!.auroc[1]).toBe(1);
    // the same credit through the rewriting path (advantage / sequence advantage = weight) where the sequence advantage is not 0
    expect(report.values.gar!.auroc[1]).toBe(1);
    expect(g!.name).toBe('grail');
    expect(r!.name).toBe('gar');
    // VeriGate: rollout 2 is degenerate (GRPO's 0), not measured against its mean advantage
    expect(report.values.verigate!.degenerate).toEqual([0, 0, 1, 1]);
    expect(report.values.gar!.degenerate).toEqual([0, 0, 1, 1]);
    expect(v!.name).toBe('verigate');
    const table = formatCreditTable(report).split('\n');
    expect(table[0]).toBe('4 rollouts (1 correct, 3 wrong): scored 2, unlabelled 1, correct 1');
    // grail is measured by its weights, so its all-wrong group counts too: 2 scored rollouts, AUROC 1 in both, none degenerate
    expect(table.find((l) => l.startsWith('grail'))).toMatch(/^grail\s+2\s+1\.000 \[1\.000, 1\.000\].*\s0$/);
    expect(table.find((l) => l.startsWith('verigate'))).toMatch(/^verigate\s+1\s/);
    expect(table.some((l) => l.startsWith('grail - gar'))).toBe(true);
    expect(table.some((l) => l.startsWith('gar - verigate'))).toBe(false); // only the first method's pairs
  });
});
