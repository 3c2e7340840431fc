/**
 * Entry of a `VerifierPool` thread: grades each chunk it is sent, in order, and posts its packed results back.
 * `workerData.progress` is this thread's progress words (see `worker.ts`).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PROGRESS_WORDS, type WorkerTask, runChunk } from './worker.js';

const progress = new Float64Array((workerData as { progress: SharedArrayBuffer }).progress, 0, PROGRESS_WORDS);
parentPort?.on('message', (task: WorkerTask) => {
  parentPort?.postMessage({ seq: task.seq, packed: runChunk(task, progress) });
});
