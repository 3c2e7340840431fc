import type * as tf from '@tensorflow/tfjs-core';
import type { BackendName } from '../backend.js';
import type { ModelConfig } from '../config.js';
import type { Qwen3Model } from '../model.js';
import type { ParamLayout } from './layout.js';

/** What a task function gets besides its input: the worker's own replica and buffers. */
export interface WorkerContext {
  /** this worker's index, 0 .. workers-1 */
  index: number;
  workers: number;
  /** the replica, re-loaded from the shared parameter buffer whenever the main thread published since the last task */
  model: Qwen3Model;
  /** the worker's tfjs, with its backend started */
  tf: typeof tf;
  backend: BackendName;
  /** this worker's gradient buffer (`layout.total` floats), read by the main thread after the task */
  gradients: Float32Array;
  layout: ParamLayout;
}

/** A task module's export: called once per run in each worker with that worker's input. */
export type WorkerTask<I, O> = (context: WorkerContext, input: I) => O | Promise<O>;

/** `workerData` of every policy worker. */
export interface WorkerInit {
  index: number;
  workers: number;
  config: ModelConfig;
  backend: BackendName;
  /** `layout.total` floats: the published parameters */
  params: SharedArrayBuffer;
  /** one int32: bumped by every publish */
  version: SharedArrayBuffer;
  /** `layout.total` floats: this worker's gradients */
  gradients: SharedArrayBuffer;
}

/** An error as it crosses the thread boundary. */
export interface WorkerErrorInfo {
  name: string;
  message: string;
  stack?: string;
  code?: string;
}

export type ToWorker = { type: 'run'; id: number; moduleUrl: string; exportName: string; input: unknown };

export type FromWorker =
  | { type: 'ready' }
  | { type: 'result'; id: number; value: unknown; taskSeconds: number; reloadSeconds: number }
  | { type: 'error'; id: number | null; error: WorkerErrorInfo };
