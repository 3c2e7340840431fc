// GAR's signal step and update beside Dr. GRPO's, on the benchmark model of @rlvr/policy (hidden 256, 6 layers,
// vocab 4096) and the saliency benchmarks' batch (16 rollouts of 32 prompt + 224 completion tokens, groups of 8),
// each group with a reference solution of --reference tokens (default 128):
//
//   policy_pass        the plain old-log-prob pass (batchLogprobs): what Dr. GRPO's update runs first
//   gar                garCosines, the default vector (the authors' grad-x-hidden D-vector)
//   gar_head_weight    garCosines with vector head-weight (factorised [T, S] inner products)
//   gar_materialize    garCosines with vector head-weight, materialize: true ([V, D] gradients)
//   dr_grpo_update     the signal step Dr. GRPO needs (none) + Trainer.step, which recomputes the old log-probs
//   gar_update         GAR's signal step (its fused pass gives the old log-probs) + Trainer.step without that pass
//
//   npx nx run-many -t build && node tools/bench/gar/signal-cost.mjs [--backend wasm|cpu] [--steps 2] [--reference 128]
//     [--cases policy_pass,gar,...] [--batch 16 --seq 256 --prompt 32]   (a subset, a smaller batch: the saliency flags)
//
// Prints `uptime` before and after, wall and CPU seconds per call (mean over --steps after one warm-up), each case's
// ratio to policy_pass in the same process, and tensors leaked. CPU seconds are this process's: less disturbed by
// other jobs than wall time, but not an idle figure on a loaded machine.
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs-core';
import { batchFromRows } from '@rlvr/core';
import { GarBackendConfigSchema, garCosines, garWorkerBackend } from '@rlvr/gar';
import { batchLogprobs } from '@rlvr/policy';
import { computeSignals, parseSignalConfig, saliencyBackends } from '@rlvr/saliency';
import { Trainer } from '@rlvr/trainer';
import { printRatios, setup, timeCases } from '../saliency/setup.mjs';

const { values } = parseArgs({ options: { reference: { type: 'string', default: '128' }, cases: { type: 'string' } }, strict: false });
// the saliency benchmarks' setup parses the rest strictly: hand it the argument list without this script's own flags
for (const flag of ['--reference', '--cases']) {
  const at = process.argv.indexOf(flag);
  if (at >= 0) process.argv.splice(at, 2);
}
const R = Number(values.reference);
const { B, S, P, C, mb, steps, backend, log, config, model, batch: plain } = await setup();
const tokenBudget = mb * S;
// the same rollouts, each group with its reference solution (random tokens, seeded)
let seed = 7;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const refs = Array.from({ length: Math.ceil(B / 8) }, () =>
  Array.from({ length: R }, () => 3 + Math.floor(rand() * (config.vocab_size - 3))),
);
const batch = batchFromRows(
  Array.from({ length: B }, (_, i) => ({
    group: plain.groupIndex[i],
    reward: plain.rewards[i],
    prompt: Array.from(plain.promptTokens.subarray(plain.promptOffsets[i], plain.promptOffsets[i + 1])),
    completion: Array.from(plain.completionTokens.subarray(plain.completionOffsets[i], plain.completionOffsets[i + 1])),
    reference: refs[plain.groupIndex[i]],
  })),
);

saliencyBackends.register(garWorkerBackend);
const trainer = new Trainer(model, { tokenBudget, schedule: { type: 'constant', lr: 1e-12 } }); // weights stay as they are
const advantages = Float32Array.from({ length: B * C }, (_, t) => (Math.floor(t / C) % 2 ? 0.5 : -0.5));
const gar = (over) => () => garCosines(model, batch, GarBackendConfigSchema.parse({ tokenBudget, ...over }));
const update = (needs) => {
  const plan = parseSignalConfig({ gar: { tokenBudget } }, needs, { temperature: trainer.config.temperature });
  return async () => {
    const { oldLogprobs } = await computeSignals(model, batch, plan, { padId: 0, tokenBudget });
    await trainer.step(batch, advantages, oldLogprobs === undefined ? {} : { oldLogprobs });
  };
};
const all = {
  policy_pass: async () => batchLogprobs(model, batch, { tokenBudget, temperature: 1 }),
  gar: gar({}),
  gar_head_weight: gar({ vector: 'head-weight' }),
  gar_materialize: gar({ vector: 'head-weight', materialize: true }),
  dr_grpo_update: update([]),
  gar_update: update(['gar.cosine']),
};
const picked = values.cases?.split(',') ?? Object.keys(all);
for (const name of picked) if (!(name in all)) throw new Error(`--cases: unknown case ${name}; known: ${Object.keys(all).join(', ')}`);
if (!picked.includes('policy_pass')) picked.unshift('policy_pass'); // the base of the ratios
const cases = Object.fromEntries(picked.map((name) => [name, all[name]]));
const head = {
  backend,
  log,
  parameters: model.numParameters(),
  batch: `${B} x ${S} (prompt ${P}, completion ${C}), references of ${R} tokens, token budget ${tokenBudget}`,
  steps,
};
printRatios(head, await timeCases(cases, steps, tf), 'policy_pass');
model.dispose();
