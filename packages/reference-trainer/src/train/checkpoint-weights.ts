/**
 * `checkpoint-weights.jsonl` (`@rlvr/report`'s `CheckpointWeightRecordSchema`): at every held-out
 * evaluation, the GRAIL weights of a fixed set of evaluation rollouts with the parameters of that
 * moment, as the GRAIL reference's `compute_checkpoint_stats.py` recomputes them per checkpoint:
 * symmetry `both`, the first box, the run's GRAIL and grad x embedding options otherwise. The set is
 * sampled once, at the run's first evaluation (`eval.weightProblems` held-out problems x
 * `rollout.groupSize` completions at the eval temperature); a resumed run reads it back from the file.
 */
import { existsSync } from 'node:fs';
import { prepareEstimator } from '@rlvr/advantages';
import { appendJsonl, batchFromRows, batchToRows, getSpans, readJsonl } from '@rlvr/core';
import type { RolloutBatch, RolloutRow } from '@rlvr/core';
import { gradeBatch } from '@rlvr/math-verify';
import type { CheckpointWeightRecord } from '@rlvr/report';
import { sampleGroups } from '@rlvr/rollout';
import { computeSignals, parseSignalConfig } from '@rlvr/saliency';
import type { OpenRun } from './open.js';

/** A record of the file: the report's fields and the rollout itself (to read the set back on resume). */
type Stored = CheckpointWeightRecord & { row: RolloutRow };

/** Append the weights of the fixed set at `step` (nothing when `eval.weightProblems` is 0). */
export async function recordCheckpointWeights(run: OpenRun, step: number): Promise<void> {
  const c = run.config;
  if (c.eval.weightProblems === 0) return;
  run.weightSet ??= (await readSet(run.logs.checkpointWeights)) ?? (await sampleSet(run));
  const batch = run.weightSet;
  const estimator = prepareEstimator('grail', { ...(c.estimator === 'grail' ? c.estimatorConfig : {}), symmetry: 'both' });
  const plan = parseSignalConfig({ 'grad-x-emb': c.saliency['grad-x-emb'] ?? {} }, estimator.needs, {
    temperature: c.trainer.temperature,
    estimator: 'grail',
  });
  const { signals } = await computeSignals(run.model, batch, plan, { padId: run.eosIds[0]!, tokenBudget: c.trainer.tokenBudget });
  const { weights } = estimator.estimate(batch, signals);
  const rows = batchToRows(batch);
  const records: Stored[] = rows.map(({ behaviorLogprobs: _b, ...row }, i) => {
    const [c0, c1] = [batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!];
    const spans = getSpans(batch, i);
    return {
      step,
      rollout: i,
      correct: row.reward > 0,
      tokens: row.completion.map((id) => run.tokenizer.decode([id])),
      weights: Array.from(weights.subarray(c0, c1)),
      spans,
      reasoning: spans === null ? null : spans.open[0],
      row,
    };
  });
  await appendJsonl(run.logs.checkpointWeights, records);
}

/** The set of an earlier process of this run: the rows of the file's first step, or null. */
async function readSet(file: string): Promise<RolloutBatch | null> {
  if (!existsSync(file)) return null;
  const rows: RolloutRow[] = [];
  let first: number | undefined;
  for await (const { value } of readJsonl(file)) {
    const r = value as Stored;
    first ??= r.step;
    if (r.step === first) rows.push(r.row);
  }
  return rows.length === 0 ? null : batchFromRows(rows);
}

/** Sample the set with the current policy: the first held-out problems, spans of the first box, rewards graded as in training. */
async function sampleSet(run: OpenRun): Promise<RolloutBatch> {
  const c = run.config;
  const tasks = run.evalTasks.slice(0, c.eval.weightProblems);
  const { batch, texts } = await sampleGroups(
    tasks.map((t) => ({ tokens: t.prompt })),
    run.sampler,
    {
      groupSize: c.rollout.groupSize,
      temperature: c.eval.temperature,
      topP: c.eval.topP,
      maxNewTokens: c.eval.maxNewTokens,
      seed: c.eval.seed,
      spans: { which: 'first' },
    },
  );
  gradeBatch(batch, texts, tasks);
  return batch;
}
