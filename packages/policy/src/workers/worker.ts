/**
 * The entry of a policy worker thread: starts its tfjs backend, builds a replica of the policy from
 * the shared parameter buffer, then runs the tasks the engine sends, one at a time. Loaded from
 * `dist/` (a worker cannot run TypeScript).
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../backend.js';
import { Qwen3Model } from '../model.js';
import { paramLayout } from './layout.js';
import type { FromWorker, ToWorker, WorkerContext, WorkerErrorInfo, WorkerInit, WorkerTask } from './protocol.js';

const init = workerData as WorkerInit;
const port = parentPort!;
const params = new Float32Array(init.params);
const version = new Int32Array(init.version);
const layout = paramLayout(init.config);

function post(message: FromWorker): void {
  port.postMessage(message);
}

function errorInfo(e: unknown): WorkerErrorInfo {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return {
      name: e.name,
      message: e.message,
      ...(e.stack === undefined ? {} : { stack: e.stack }),
      ...(typeof code === 'string' ? { code } : {}),
    };
  }
  return { name: 'Error', message: String(e) };
}

/** Copy the published parameters into the replica's variables (slices: a tensor must never alias the shared buffer). */
function reload(model: Qwen3Model): void {
  for (const slot of layout.slots) {
    const v = model.params.get(slot.name)!;
    tf.tidy(() => v.assign(tf.tensor(params.slice(slot.offset, slot.offset + slot.size), slot.shape, 'float32')));
  }
}

async function main(): Promise<void> {
  const backend = await selectBackend({ backend: init.backend });
  let seen = Atomics.load(version, 0);
  const model = Qwen3Model.fromWeights(init.config, (name) => {
    const slot = layout.slots.find((s) => s.name === name);
    return slot && { shape: slot.shape, data: params.slice(slot.offset, slot.offset + slot.size) };
  });
  const context: WorkerContext = {
    index: init.index,
    workers: init.workers,
    model,
    tf,
    backend,
    gradients: new Float32Array(init.gradients),
    layout,
  };
  port.on('message', async (msg: ToWorker) => {
    try {
      let reloadSeconds = 0;
      const now = Atomics.load(version, 0);
      if (now !== seen) {
        const t0 = performance.now();
        reload(model);
        seen = now;
        reloadSeconds = (performance.now() - t0) / 1000;
      }
      const t1 = performance.now();
      const mod = (await import(msg.moduleUrl)) as Record<string, unknown>;
      const fn = mod[msg.exportName];
      if (typeof fn !== 'function') throw new TypeError(`${msg.moduleUrl} has no function export ${msg.exportName}`);
      const value = await (fn as WorkerTask<unknown, unknown>)(context, msg.input);
      post({ type: 'result', id: msg.id, value, taskSeconds: (performance.now() - t1) / 1000, reloadSeconds });
    } catch (e) {
      post({ type: 'error', id: msg.id, error: errorInfo(e) });
    }
  });
  post({ type: 'ready' });
}

main().catch((e: unknown) => post({ type: 'error', id: null, error: errorInfo(e) }));
