/**
 * The file piscina loads in each verifier thread. piscina loads it with `require()`; on Node >= 20.19 that loads an
 * ES module graph synchronously, and a thread terminated in the middle of it (an item past its budget, the pool's
 * close) aborts the whole process (`FATAL ERROR: v8::Module::IsGraphAsync`, seen in CI). This CommonJS file loads
 * the ES worker with `import()`, which a terminated thread abandons safely.
 */
import type { WorkerTask } from './worker.js';

let worker: Promise<typeof import('./worker.js')> | undefined;

export = function run(task: WorkerTask): Promise<ReturnType<typeof import('./worker.js')['default']>> {
  worker ??= import('./worker.js');
  return worker.then((m) => m.default(task));
};
