import { METRIC, appendJsonl, passAtMetric } from '@rlvr/core';
import type { Logger } from '@rlvr/core';
import { percent } from '@rlvr/core';
import { heldOutEval } from '@rlvr/eval';
import type { EvalRecord } from '@rlvr/report';
import type { OpenRun } from './open.js';
import { recordCheckpointWeights } from './checkpoint-weights.js';

/**
 * The held-out evaluation of `run` at `step`: `eval.n` samples per problem (and greedy decoding
 * unless `eval.greedy` is false), appended to `run.evals` and evals.jsonl, the GRAIL weights of the
 * fixed evaluation rollouts appended to checkpoint-weights.jsonl, one log line. Returns
 * its metrics for the step's metrics.jsonl line.
 */
export async function evaluateRun(run: OpenRun, step: number, logger: Logger): Promise<Record<string, number>> {
  const { config } = run;
  const e = await heldOutEval(run.model, run.tokenizer, run.evalTasks, {
    ...config.eval,
    seed: config.seed,
    eosIds: run.eosIds,
    ...(run.evalSampler === undefined ? {} : { sampler: run.evalSampler }),
  });
  const record: EvalRecord = { step, accuracy: e.accuracy, passAtN: e.passAtN, n: e.n, problems: e.problems, correct: e.correct };
  if (e.greedyAccuracy !== undefined) Object.assign(record, { greedyAccuracy: e.greedyAccuracy, greedyCorrect: e.greedyCorrect });
  if (e.stepQuality !== undefined) record.stepQuality = e.stepQuality;
  run.evals.push(record);
  await appendJsonl(run.logs.evals, [record]);
  const greedy = e.greedyAccuracy === undefined ? '' : `, greedy ${percent(e.greedyAccuracy)}`;
  await recordCheckpointWeights(run, step);
  logger.info(
    `eval step ${step}: accuracy ${percent(e.accuracy)} (mean of ${e.n} samples at T=${config.eval.temperature}), pass@${e.n} ${percent(e.passAtN)}${greedy} on ${e.problems} held-out problems`,
  );
  return {
    [METRIC.accuracy]: e.accuracy,
    [passAtMetric(e.n)]: e.passAtN,
    ...(e.greedyAccuracy === undefined ? {} : { [METRIC.accuracyGreedy]: e.greedyAccuracy }),
    [METRIC.evalMeanTokens]: e.meanTokens,
    [METRIC.evalTruncated]: e.truncated,
  };
}
