import { describe, expect, test } from 'vitest';
import { heldOutRecord } from './held-out.js';
import { scoreDataset } from './score.js';

describe('heldOutRecord', () => {
  test("a trainer's evals.jsonl line, metrics.jsonl columns and log line of one evaluation", () => {
    const out = (correct: boolean, truncated = false) => ({ correct, truncated, answered: true });
    const score = scoreDataset(
      [
        [out(true), out(false)],
        [out(false, true), out(false)],
      ],
      2,
      [10, 30],
    );
    const e = { ...score, finished: 0.75, examples: [], greedyAccuracy: 0.5, greedyCorrect: [1, 0] };
    const { record, metrics, line } = heldOutRecord(e, 4, 0.6);
    expect(record).toEqual({
      step: 4,
      accuracy: 0.25,
      passAtN: 0.5,
      n: 2,
      problems: 2,
      correct: [1, 0],
      greedyAccuracy: 0.5,
      greedyCorrect: [1, 0],
    });
    expect(metrics).toEqual({ accuracy: 0.25, 'pass@2': 0.5, 'accuracy/greedy': 0.5, 'eval/mean_tokens': 10, 'eval/truncated': 0.25 });
    expect(line).toBe('eval step 4: accuracy 25.0% (mean of 2 samples at T=0.6), pass@2 50.0%, greedy 50.0% on 2 held-out problems');
    const sampledOnly = heldOutRecord({ ...score, finished: 1, examples: [] }, 0, 1);
    expect(Object.keys(sampledOnly.record)).toEqual(['step', 'accuracy', 'passAtN', 'n', 'problems', 'correct']);
    expect(sampledOnly.line).toBe('eval step 0: accuracy 25.0% (mean of 2 samples at T=1), pass@2 50.0% on 2 held-out problems');
  });
});
