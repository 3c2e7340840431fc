// Cost of one RL update per estimator family, beside GRPO's, on the benchmark config of
// @rlvr/policy (hidden 256, 6 layers, vocab 4096; batch 16 x 256 tokens, micro-batches of 4 rows):
// the signal step (`computeSignals` of @rlvr/saliency, from the config `parseSignalConfig`
// resolves) plus `Trainer.step` (1 epoch, old log-probs recomputed unless a fused pass gave them).
// Sampling and grading cost the same for every estimator and are left out.
//
//   grpo            no signal; the trainer recomputes the old log-probs (one forward) and updates
//   oar_g           noisy-kl scores; old log-probs from its clean pass when the backend returns them
//   oar_g_recompute noisy-kl scores, and the trainer recomputes the old log-probs anyway (the
//                   shape of the step before OAR-G returned its clean pass's log-probs)
//   grail           the fused GRAIL pass: scores and old log-probs in one pass
//
//   npm run build && node tools/bench/saliency/step-cost.mjs [--backend wasm|cpu] [--steps 2]
//
// Prints `uptime` before and after, then a JSON summary: wall and CPU seconds per update (mean
// over --steps after one warm-up), and each case's ratio to grpo in the same process.
import * as tf from '@tensorflow/tfjs-core';
import { SIGNAL_NAMES } from '@rlvr/core';
import { computeSignals, parseSignalConfig } from '@rlvr/saliency';
import { Trainer } from '@rlvr/trainer';
import { printRatios, setup, timeCases } from './setup.mjs';

const { B, S, P, C, mb, steps, backend, log, model, batch } = await setup();
const tokenBudget = mb * S;
const pass = { padId: 0, tokenBudget };
// A learning rate that leaves the weights as they are: every case times the same model.
const trainer = new Trainer(model, { tokenBudget, schedule: { type: 'constant', lr: 1e-12 } });
const advantages = Float32Array.from({ length: B * C }, (_, t) => (Math.floor(t / C) % 2 ? 0.5 : -0.5));

const step = (needs, saliency = {}, recompute = false) => {
  const plan = parseSignalConfig(saliency, needs, { temperature: trainer.config.temperature });
  return async () => {
    const { oldLogprobs } = await computeSignals(model, batch, plan, pass);
    await trainer.step(batch, advantages, oldLogprobs === undefined || recompute ? {} : { oldLogprobs });
  };
};
const cases = {
  grpo: step([]),
  oar_g: step([SIGNAL_NAMES.noisyKl], { 'noisy-kl': { tokenBudget } }),
  oar_g_recompute: step([SIGNAL_NAMES.noisyKl], { 'noisy-kl': { tokenBudget } }, true),
  grail: step([SIGNAL_NAMES.gradXEmb], { 'grad-x-emb': { tokenBudget } }),
};

const head = {
  backend,
  log,
  parameters: model.numParameters(),
  batch: `${B} x ${S} (prompt ${P}, completion ${C}), token budget ${tokenBudget}`,
  steps,
};
printRatios(head, await timeCases(cases, steps, tf), 'grpo');
model.dispose();
