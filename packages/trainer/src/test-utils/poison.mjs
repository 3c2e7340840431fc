// Test tasks that sabotage a worker's replica, run through PolicyWorkers before a Trainer.step:
// plain ES modules, since a worker cannot run TypeScript.

/** In worker `input.worker`: the replica's `input.call`-th forward pass (1-based, counted from now) exits the thread with code 7. */
export function exitOnForward(ctx, input) {
  if (ctx.index !== input.worker) return;
  const hidden = ctx.model.hidden.bind(ctx.model);
  let calls = 0;
  ctx.model.hidden = (x) => {
    if (++calls === input.call) process.exit(7);
    return hidden(x);
  };
}

/** In worker `input.worker`: the replica's next forward pass throws. */
export function throwOnForward(ctx, input) {
  if (ctx.index !== input.worker) return;
  ctx.model.hidden = () => {
    throw new RangeError('poisoned replica');
  };
}
