/**
 * The file piscina loads in each `/advantages` thread. piscina loads it with `require()`; on Node >= 20.19 that
 * loads an ES module graph synchronously, and a thread terminated in the middle of it (the pool's close) aborts the
 * whole process (`FATAL ERROR: v8::Module::IsGraphAsync`, seen in CI). This CommonJS file loads the ES worker with
 * `import()`, which a terminated thread abandons safely.
 */
import type { AdvantagesTask, AdvantagesTaskResult } from './advantages-worker.js';

let worker: Promise<typeof import('./advantages-worker.js')> | undefined;

export = function run(task: AdvantagesTask): Promise<AdvantagesTaskResult> {
  worker ??= import('./advantages-worker.js');
  return worker.then((m) => m.default(task));
};
