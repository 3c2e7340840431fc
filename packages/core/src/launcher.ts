/**
 * A bin started by npm (`npx rlvr-reward-server &`, `npm exec`, `npm run`) runs as npm -> sh -> node. `kill $!` sends
 * SIGTERM to npm, which passes it to the shell, which dies without passing it on: the node process, re-parented, went
 * on serving and held its port. So a bin that npm started treats the loss of its parent as the signal itself.
 */

/** How often the parent is checked (ms): a poll of one system call, on a timer that keeps no process alive. */
const EVERY_MS = 250;

/**
 * When npm launched this process (`npm_lifecycle_event` in `env`), calls `onGone` once, as soon as the parent process
 * is no longer the one it started under (it exited and this process was re-parented). Returns a function that stops
 * watching. Started outside npm (`node bin/...`, a service manager, `nohup`), nothing is watched: such a process may
 * outlive its parent on purpose.
 */
export function watchLauncher(onGone: () => void, env: Record<string, string | undefined> = process.env): () => void {
  if (env.npm_lifecycle_event === undefined) return () => {};
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
