import { appendJsonl, METRIC } from '@rlvr/core';
import type { Logger } from '@rlvr/core';
import { dirname, join } from 'node:path';
import { creditAtStep, heldOutEval, heldOutRecord } from '@rlvr/eval';
import { configChainSource } from '@rlvr/tasks';
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
  const started = performance.now();
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
  if (config.eval.credit !== undefined) {
    // rlvr credit's files for the policy of this moment in RUN/credit/step-N, one log line (none where a resume finds them)
    const o = {
      ...config,
      ...config.eval.credit,
      source: configChainSource(config, config.eval.seed),
      dir: join(dirname(run.logs.evals), 'credit'),
    };
    const credit = await creditAtStep(run.model, run.tokenizer, step, o);
    if (credit !== null) logger.info(credit);
  }
  // a tuning run's evaluation (`validation`) is of the validation split, never of the held-out problems
  logger.info(config.validation === undefined ? line : line.replace('held-out problems', 'validation problems'));
  return { ...metrics, [METRIC.timeEval]: (performance.now() - started) / 1000 };
}
