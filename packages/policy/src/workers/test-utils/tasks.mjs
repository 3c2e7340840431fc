// Task modules of the engine's tests: plain ES modules, since a worker cannot run TypeScript.

/** The logits of `ids` `[1, n]` under the replica, and what the worker knows of itself. */
export function logits(ctx, input) {
  const { tf, model } = ctx;
  const out = tf.tidy(() => model.logits({ ids: tf.tensor2d(input.ids, [1, input.ids.length], 'int32') }));
  const data = Array.from(out.dataSync());
  out.dispose();
  return { index: ctx.index, workers: ctx.workers, backend: ctx.backend, data };
}

/** Fill the worker's gradient buffer with `input + index`. */
export function fillGradients(ctx, input) {
  ctx.gradients.fill(input + ctx.index);
  return ctx.layout.total;
}

/** Throw in worker `input`; the others answer. */
export async function throwIn(ctx, input) {
  if (ctx.index === input) throw new RangeError(`bad input in worker ${ctx.index}`);
  return ctx.index;
}

/** Exit worker `input` mid-task; the others answer. */
export function exitIn(ctx, input) {
  if (ctx.index === input) process.exit(3);
  return ctx.index;
}

/** Crash worker `input` with an uncaught exception outside the task; it never answers. */
export function crashIn(ctx, input) {
  if (ctx.index !== input) return ctx.index;
  setTimeout(() => {
    throw new Error('uncaught in a timer');
  }, 1);
  return new Promise(() => {});
}

/** A result that cannot cross the thread boundary. */
export function unclonable() {
  return { f: () => 1 };
}
