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
//   npm run build && node tools/bench/saliency/refresh-cost.mjs [--backend wasm|cpu] [--steps 2]
//
// Prints `uptime` before and after, then a JSON summary: wall and CPU seconds per RL step (mean
// over --steps after one warm-up) and each case's ratio to grpo in the same process; the GRAIL
// overhead per update is that ratio minus 1.
import * as tf from '@tensorflow/tfjs-core';
import { prepareEstimator } from '@rlvr/advantages';
import { signalRefresh } from '@rlvr/reference-trainer';
import { computeSignals, parseSignalConfig } from '@rlvr/saliency';
import { Trainer } from '@rlvr/trainer';
import { printRatios, setup, timeCases } from './setup.mjs';

const { B, S, P, C, mb, steps, backend, log, model, batch } = await setup();
const tokenBudget = mb * S;
const pass = { padId: 0, tokenBudget };
const epochs = 4;
const miniBatches = 2;
// A learning rate that leaves the weights as they are: every case times the same model.
const trainer = new Trainer(model, { tokenBudget, epochs, miniBatches, schedule: { type: 'constant', lr: 1e-12 } });

const step = async (estimatorName, refresh) => {
  const estimator = prepareEstimator(estimatorName);
  const saliency = estimator.needs.length > 0 ? { refresh, 'grad-x-emb': { tokenBudget } } : {};
  const plan = parseSignalConfig(saliency, estimator.needs, { temperature: trainer.config.temperature });
  const hook =
    refresh === 'batch' || estimator.needs.length === 0
      ? null
      : await signalRefresh({ every: refresh, estimator: estimatorName, saliency });
  return async () => {
    const { signals, oldLogprobs } = computeSignals(model, batch, plan, pass);
    const { advantages } = estimator.estimate(batch, signals);
    hook?.useSignals(batch, signals);
    const { metrics } = await trainer.step(batch, advantages, {
      ...(oldLogprobs === undefined ? {} : { oldLogprobs }),
      ...(hook === null ? {} : { refresh: hook }),
    });
    refreshes[`${estimatorName}_${refresh}`] = metrics['refresh/count'] ?? 0;
  };
};
const refreshes = {};
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
  refreshes_per_step: refreshes,
};
printRatios(head, timed, 'grpo');
model.dispose();
