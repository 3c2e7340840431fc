import { appendJsonl } from '@rlvr/core';
import type { Logger } from '@rlvr/core';
import { heldOutEval, heldOutRecord } from '@rlvr/eval';
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
  const { record, metrics, line } = heldOutRecord(e, step, config.eval.temperature);
  run.evals.push(record satisfies EvalRecord);
  await appendJsonl(run.logs.evals, [record]);
  await recordCheckpointWeights(run, step);
  logger.info(line);
  return metrics;
}
