import { appendJsonl } from '@rlvr/core';
import type { Logger } from '@rlvr/core';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { creditOfPolicy, heldOutEval, heldOutRecord } from '@rlvr/eval';
import { chainProblems } from '@rlvr/tasks';
import { chainSource } from './problems.js';
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
  if (config.eval.credit !== undefined) await recordCredit(run, step, logger);
  logger.info(line);
  return metrics;
}

/** `eval.credit`: `rlvr credit`'s files for the policy of this moment in RUN/credit/step-N (same problems every time), one log line. */
async function recordCredit(run: OpenRun, step: number, logger: Logger): Promise<void> {
  const c = run.config;
  const { estimators, rollouts } = c.eval.credit!;
  const out = join(dirname(run.logs.evals), 'credit', `step-${step}`);
  if (existsSync(join(out, 'credit.json'))) return; // written before a resume
  const problems = await chainProblems(chainSource(c, c.eval.seed), Math.ceil(rollouts / c.rollout.groupSize));
  const r = await creditOfPolicy(run.model, run.tokenizer, {
    ...c,
    problems,
    estimators,
    out,
    resamples: 1000,
    title: `credit maps at step ${step}`,
  });
  logger.info(
    `credit step ${step}: ${r.methods.map((m) => `${m.name} AUROC ${m.wrong.auroc.mean?.toFixed(3) ?? '-'} (${m.wrong.auroc.n})`).join(', ')}`,
  );
}
