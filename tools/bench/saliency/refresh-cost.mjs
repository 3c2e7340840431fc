// GRAIL's overhead per RL update for each `saliency.refresh` mode, beside GRPO's update, on the
// benchmark config of @rlvr/policy (hidden 256, 6 layers, vocab 4096; batch 16 x 256 tokens,
// micro-batches of 4 rows), with `trainer.epochs` 4 (the reference's num_iterations) and
// `trainer.miniBatches` 2:
//
//   grpo             no signal; the trainer recomputes the old log-probs and runs 8 updates
//   grail_batch      the fused GRAIL pass once (scores + old log-probs), then 8 updates (the default)
//   grail_epoch      + the GRAIL scores of every rollout again before passes 2..4 (3 passes)
//   grail_minibatch  + the GRAIL scores of the next mini-batch's rollouts before updates 2..8
//                    (7 half-batches), as the reference does at every micro-step
//
// Each case: the signal step (`computeSignals`), the estimator, `Trainer.step` with the refresh
// `rlvr train` builds (`signalRefresh` of @rlvr/reference-trainer). Sampling and grading are
// the same for every case and left out.
//
//   npm run build && node tools/bench/saliency/refresh-cost.mjs [--backend wasm|cpu] [--steps 2] [--workers N]
//
// `--workers N` (N > 1) runs every case as `rlvr train --workers N` does: the signal step on N
// policy workers (`computeSignalsOnWorkers`), the trainer's old-log-prob recomputation, gradients
// and advantage refreshes (`refreshSignalsOnWorkers`) on them too. Compare the wall seconds with a
// run without it (the in-process path, `--workers 1`) on an idle machine (CPU seconds then count
// every thread of the process).
//
// Prints `uptime` before and after, then a JSON summary: wall and CPU seconds per RL step (mean
// over --steps after one warm-up) and each case's ratio to grpo in the same process; the GRAIL
// overhead per update is that ratio minus 1.
import * as tf from '@tensorflow/tfjs-core';
import { prepareEstimator } from '@rlvr/advantages';
import { PolicyWorkers } from '@rlvr/policy';
import { signalRefresh } from '@rlvr/reference-trainer';
import { computeSignals, computeSignalsOnWorkers, parseSignalConfig } from '@rlvr/saliency';
import { Trainer } from '@rlvr/trainer';
import { printRatios, setup, timeCases } from './setup.mjs';

// `--workers N` is this benchmark's own flag: taken out before the shared ones are parsed.
const at = process.argv.indexOf('--workers');
const workersFlag = at < 0 ? '1' : process.argv.splice(at, 2)[1];
const threads = Number(workersFlag);
if (!Number.isInteger(threads) || threads < 1) throw new Error(`--workers must be an integer >= 1, got ${workersFlag}`);

const { B, S, P, C, mb, steps, backend, log, model, batch } = await setup();
const tokenBudget = mb * S;
const pass = { padId: 0, tokenBudget };
const epochs = 4;
const miniBatches = 2;
const workers = threads > 1 ? await PolicyWorkers.start(model, { workers: threads, backend }) : undefined;
// A learning rate that leaves the weights as they are: every case times the same model.
const trainer = new Trainer(
  model,
  { tokenBudget, epochs, miniBatches, schedule: { type: 'constant', lr: 1e-12 } },
  workers === undefined ? {} : { workers },
);

const step = async (estimatorName, refresh) => {
  const estimator = prepareEstimator(estimatorName);
  const saliency = estimator.needs.length > 0 ? { refresh, 'grad-x-emb': { tokenBudget } } : {};
  const plan = parseSignalConfig(saliency, estimator.needs, { temperature: trainer.config.temperature });
  const hook =
    refresh === 'batch' || estimator.needs.length === 0
      ? null
      : await signalRefresh({ every: refresh, estimator: estimatorName, saliency });
  return async () => {
    const { signals, oldLogprobs } = workers
      ? await computeSignalsOnWorkers(workers, model, batch, plan, pass)
      : await computeSignals(model, batch, plan, pass);
    const { advantages } = estimator.estimate(batch, signals);
    hook?.useSignals(batch, signals);
    const { metrics } = await trainer.step(batch, advantages, {
      ...(oldLogprobs === undefined ? {} : { oldLogprobs }),
      ...(hook === null ? {} : { refresh: hook }),
    });
    refreshes[`${estimatorName}_${refresh}`] = metrics['refresh/count'] ?? 0;
    refreshSeconds[`${estimatorName}_${refresh}`] = metrics['time/refresh_s'] ?? 0;
  };
};
const refreshes = {};
/** the refreshes' seconds in the last step of each case */
const refreshSeconds = {};
const cases = {
  grpo: await step('grpo', 'batch'),
  grail_batch: await step('grail', 'batch'),
  grail_epoch: await step('grail', 'epoch'),
  grail_minibatch: await step('grail', 'minibatch'),
};

const timed = await timeCases(cases, steps, tf);
const head = {
  backend,
  log,
  parameters: model.numParameters(),
  batch: `${B} x ${S} (prompt ${P}, completion ${C}), token budget ${tokenBudget}, epochs ${epochs}, miniBatches ${miniBatches}`,
  steps,
  workers: threads,
  refreshes_per_step: refreshes,
  refresh_seconds_last_step: refreshSeconds,
};
printRatios(head, timed, 'grpo');
await workers?.close();
model.dispose();
