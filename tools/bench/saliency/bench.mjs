// @rlvr/saliency cost: on the benchmark config of @rlvr/policy (hidden 256, 6 layers, 8 heads,
// vocab 4096; batch 16 x 256 tokens), all in one run, on one backend:
//   (a) the old-log-prob forward alone (what a trainer runs anyway once per rollout batch),
//   (b) the fused forward + GRAIL input-only backward (`logprobsWithGradXEmb`: old log-probs AND scores),
//   (c) OAR-G (`noisyKl`: clean forward + noisy forward + input-only backward),
//   (d) one full training forward + backward (tf.variableGrads over all parameters of a log-prob loss).
// Goals of issue 5: (b)/(a) <= 2.0 and (b)/(d) <= 1.
//
//   npx tsc -b packages/saliency && node tools/bench/saliency/bench.mjs [--backend wasm|cpu|tensorflow] [--steps 2]
//
// Prints `uptime` before and after, and a JSON summary. Timings are wall-clock means over --steps after one warm-up each.
import * as tf from '@tensorflow/tfjs-core';
import { logprobsWithGradXEmb, noisyKl, packRows } from '@rlvr/saliency';
import { setup, timeCases, uptime } from './setup.mjs';
import { summedGrads } from '../policy/loss.mjs';

const { B, S, P, C, mb, steps, backend, log, config, model, batch } = await setup();
const tokenBudget = mb * S;
const micro = [];
for (let s = 0; s < B; s += mb)
  micro.push(
    packRows(
      batch,
      [...Array(Math.min(mb, B - s)).keys()].map((k) => s + k),
      'boxed',
    ),
  );

/** (a) the old log-probs alone: one forward pass from ids per micro-batch, chunked log-softmax, read back. */
function oldLogprobs() {
  for (const p of micro) {
    tf.tidy(() => {
      const ids = tf.tensor2d(p.ids, [p.n, S], 'int32');
      const mask = tf.tensor2d(p.attentionMask, [p.n, S]);
      const h = tf.slice(model.hidden({ ids, attentionMask: mask }), [0, P - 1, 0], [p.n, C, config.hidden_size]);
      model.tokenLogprobs(h, tf.slice(ids, [0, P], [p.n, C])).logprobs.dataSync();
    });
  }
}

/** (d) one training forward + backward over every parameter (the update a PPO epoch runs), gradients summed over micro-batches. */
function trainStep() {
  const inputs = micro.map((p) => {
    const ids = tf.tensor2d(p.ids, [p.n, S], 'int32');
    return { n: p.n, ids, mask: tf.tensor2d(p.attentionMask, [p.n, S]), targets: tf.slice(ids, [0, P], [p.n, C]) };
  });
  const acc = summedGrads(tf, model, inputs, ({ n, ids, mask, targets }) => {
    const h = tf.slice(model.hidden({ ids, attentionMask: mask }), [0, P - 1, 0], [n, C, config.hidden_size]);
    return tf.div(tf.neg(tf.sum(model.tokenLogprobs(h, targets).logprobs)), B * C);
  });
  tf.dispose(inputs.flatMap((x) => [x.ids, x.mask, x.targets]));
  Object.values(acc)[0].dataSync();
  tf.dispose(Object.values(acc));
}

const cases = {
  a_old_logprobs: oldLogprobs,
  b_fused_grail: () => logprobsWithGradXEmb(model, batch, { tokenBudget }),
  c_oar_g: () => noisyKl(model, batch, { tokenBudget }),
  d_train_step: trainStep,
};
const r = (x) => Math.round(x * 100) / 100;
const { seconds, cpuSeconds, leaks } = await timeCases(cases, steps, tf);
const ratios = (t) => ({
  'b/a (goal <= 2.0)': r(t.b_fused_grail / t.a_old_logprobs),
  'b/d (goal <= 1)': r(t.b_fused_grail / t.d_train_step),
  'c/a': r(t.c_oar_g / t.a_old_logprobs),
  'c/d': r(t.c_oar_g / t.d_train_step),
  'GRAIL overhead per update with 4 epochs = (b - a) / (4 d + a)': r(
    (t.b_fused_grail - t.a_old_logprobs) / (4 * t.d_train_step + t.a_old_logprobs),
  ),
});

console.log(
  JSON.stringify(
    {
      backend,
      log,
      parameters: model.numParameters(),
      batch: `${B} x ${S} (prompt ${P}, completion ${C}), ${micro.length} micro-batches of ${mb}`,
      steps,
      seconds,
      cpu_seconds: cpuSeconds,
      ratios_wall: ratios(seconds),
      ratios_cpu: ratios(cpuSeconds),
      leaked_tensors: leaks,
    },
    null,
    2,
  ),
);
console.log(`uptime after: ${uptime()}`);
model.dispose();
