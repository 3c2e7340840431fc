import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs-core';
import { BACKEND_NAMES, type BackendName } from '../backend.js';
import { PolicyError } from '../errors.js';
import type { Qwen3Model } from '../model.js';
import { paramLayout, type ParamLayout } from './layout.js';
import type { FromWorker, ToWorker, WorkerErrorInfo, WorkerInit } from './protocol.js';

export interface PolicyWorkersOptions {
  /** worker threads, >= 1 */
  workers: number;
  /** each worker's tfjs backend; default: the backend the calling thread runs on now */
  backend?: BackendName;
}

/** Where the time of the last `run` went, in seconds. */
export interface RunTiming {
  /** from `run` to its last result, on the calling thread */
  wall: number;
  /** per worker: the task itself */
  task: number[];
  /** per worker: re-loading the replica from the shared parameters (0 when nothing was published since) */
  reload: number[];
}

interface PendingRun {
  id: number;
  results: unknown[];
  remaining: number;
  resolve: (values: unknown[]) => void;
  reject: (e: Error) => void;
  task: number[];
  reload: number[];
  t0: number;
}

/**
 * Resolve a module of a package for a worker: workers cannot run TypeScript, so a URL under `src/`
 * (the caller runs from source, e.g. under vitest) maps to the same file under `dist/`.
 * `url` is relative to the caller: `compiledModuleUrl(new URL('./task.js', import.meta.url))`.
 */
export function compiledModuleUrl(url: URL): string {
  const path = fileURLToPath(url);
  if (existsSync(path)) return url.href;
  const at = path.lastIndexOf('/src/');
  const built = at < 0 ? null : `${path.slice(0, at)}/dist/${path.slice(at + 5)}`;
  if (built !== null && existsSync(built)) return pathToFileURL(built).href;
  throw new PolicyError(
    'invalid_input',
    `worker module ${path} does not exist${built === null ? '' : ` (nor ${built}: build the package first)`}`,
  );
}

/**
 * A data-parallel engine: N `worker_threads`, each with its own tfjs backend and a replica of one
 * policy. The parameters live in one `SharedArrayBuffer` (`layout`: name -> offset / shape, in
 * `model.params` order); `publish` writes them and bumps a version counter, and a replica re-loads
 * before its next task when the version changed. Each worker owns a gradient buffer of the same
 * layout (`gradients(i)`). `run` calls a task module's export in every worker and returns the
 * results in worker order. A worker that throws or dies fails the run with its error and closes
 * the engine: it never hangs, and it is never half-usable.
 */
export class PolicyWorkers {
  readonly size: number;
  readonly layout: ParamLayout;
  readonly backend: BackendName;
  readonly #configJson: string;
  readonly #workers: Worker[] = [];
  readonly #params: Float32Array;
  readonly #version: Int32Array;
  readonly #grads: Float32Array[] = [];
  #pending: PendingRun | null = null;
  #starting: { ready: number; resolve: () => void; reject: (e: Error) => void } | null = null;
  #failure: PolicyError | null = null;
  #closed = false;
  #nextId = 0;
  #publishSeconds = 0;
  #publishes = 0;
  #reloadSeconds = 0;
  #lastRun: RunTiming | null = null;
  /** the model and the data of its variables at the last publish: a variable's `dataId` changes on every `assign` */
  #published: { model: Qwen3Model; dataIds: object[] } | null = null;

  private constructor(model: Qwen3Model, options: PolicyWorkersOptions, initial: Float32Array[]) {
    if (!Number.isInteger(options.workers) || options.workers < 1)
      throw new PolicyError('invalid_config', `workers must be an integer >= 1, got ${options.workers}`, { field: 'workers' });
    const backend = options.backend ?? (tf.getBackend() as BackendName);
    if (!(BACKEND_NAMES as readonly string[]).includes(backend))
      throw new PolicyError(
        'backend_unavailable',
        `backend ${backend} cannot run in a policy worker (allowed: ${BACKEND_NAMES.join(', ')})`,
      );
    this.size = options.workers;
    this.backend = backend;
    this.layout = paramLayout(model.config);
    this.#configJson = JSON.stringify(model.config);
    const params = new SharedArrayBuffer(this.layout.total * 4);
    const version = new SharedArrayBuffer(4);
    this.#params = new Float32Array(params);
    this.#version = new Int32Array(version);
    this.#write(model, initial);
    const entry = compiledModuleUrl(new URL('./worker.js', import.meta.url));
    for (let i = 0; i < this.size; i++) {
      const gradients = new SharedArrayBuffer(this.layout.total * 4);
      this.#grads.push(new Float32Array(gradients));
      const init: WorkerInit = { index: i, workers: this.size, config: model.config, backend, params, version, gradients };
      const w = new Worker(new URL(entry), { workerData: init });
      w.on('message', (m: FromWorker) => this.#onMessage(i, m));
      w.on('error', (e) => this.#fail(i, `crashed: ${e.name}: ${e.message}`, e));
      w.on('messageerror', (e) => this.#fail(i, `sent a message that could not be read: ${e.message}`, e));
      w.on('exit', (code) => {
        if (!this.#closed) this.#fail(i, `exited with code ${code}`, undefined);
      });
      this.#workers.push(w);
    }
  }

  /**
   * Start `options.workers` workers with replicas of `model` (its current weights are published).
   * Resolves once every worker has started its backend and built its replica.
   */
  static async start(model: Qwen3Model, options: PolicyWorkersOptions): Promise<PolicyWorkers> {
    const t0 = performance.now();
    const engine = new PolicyWorkers(model, options, await hostParams(model, paramLayout(model.config)));
    // the first publish, as any other: counted, and timed on this thread
    engine.#publishes = 1;
    engine.#publishSeconds = (performance.now() - t0) / 1000;
    await new Promise<void>((resolve, reject) => {
      engine.#starting = { ready: 0, resolve, reject };
    });
    for (const w of engine.#workers) w.unref();
    return engine;
  }

  /**
   * The weight sync so far: publishes that copied, their seconds on the calling thread, and the
   * re-loads' seconds (per run, the slowest replica's: the replicas re-load in parallel).
   */
  get syncStats(): { publishes: number; publishSeconds: number; reloadSeconds: number } {
    return { publishes: this.#publishes, publishSeconds: this.#publishSeconds, reloadSeconds: this.#reloadSeconds };
  }

  /** Where the time of the last `run` went. */
  get lastRun(): RunTiming | null {
    return this.#lastRun;
  }

  /** True until `close()` or a worker failure. */
  get usable(): boolean {
    return !this.#closed && this.#failure === null;
  }

  /**
   * Write `model`'s parameters (the same config as the replicas) into the shared buffer; every
   * replica re-loads them before its next task. Free when none of the model's variables was
   * assigned since the last publish of the same model (nothing is copied, nothing re-loads). Not
   * while a run is in flight. Returns the seconds (the parameters are read asynchronously: the
   * webgpu backend has no synchronous read in Node).
   */
  async publish(model: Qwen3Model): Promise<number> {
    this.#checkUsable();
    if (this.#pending) throw new PolicyError('engine_busy', 'publish while a run is in flight: the replicas are reading the weights');
    const vars = this.layout.slots.map((slot) => model.params.get(slot.name));
    const last = this.#published;
    if (last !== null && last.model === model && vars.every((v, k) => v?.dataId === last.dataIds[k])) return 0;
    if (JSON.stringify(model.config) !== this.#configJson)
      throw new PolicyError('invalid_input', 'publish: the model has another config than the replicas', { field: 'config' });
    const t0 = performance.now();
    const host = await hostParams(model, this.layout);
    if (this.#pending) throw new PolicyError('engine_busy', 'a run started while publish read the weights: await publish first');
    this.#write(model, host);
    const s = (performance.now() - t0) / 1000;
    this.#publishSeconds += s;
    this.#publishes++;
    return s;
  }

  /** Copy host parameters (layout order) into the shared buffer; the replicas re-load before their next task. */
  #write(model: Qwen3Model, host: Float32Array[]): void {
    this.layout.slots.forEach((slot, k) => this.#params.set(host[k]!, slot.offset));
    Atomics.add(this.#version, 0, 1);
    this.#published = { model, dataIds: this.layout.slots.map((slot) => model.params.get(slot.name)!.dataId) };
  }

  /** Worker `i`'s gradient buffer (`layout.total` floats), as its last task left it. Read it; copy before the next run. */
  gradients(i: number): Float32Array {
    const g = this.#grads[i];
    if (g === undefined) throw new PolicyError('invalid_input', `no worker ${i} (the engine has ${this.size})`, { field: 'worker' });
    return g;
  }

  /**
   * Call export `exportName` of the ES module `moduleUrl` (a string as `compiledModuleUrl` returns it, or
   * the caller's `new URL('./task.js', import.meta.url)`, which goes through `compiledModuleUrl` here) in
   * every worker: worker i gets `(context, inputs[i])`. Results come back in worker order. One run at a time.
   */
  run<I, O>(module: string | URL, exportName: string, inputs: readonly I[]): Promise<O[]> {
    this.#checkUsable();
    const moduleUrl = typeof module === 'string' ? module : compiledModuleUrl(module);
    if (this.#pending) throw new PolicyError('engine_busy', 'a run is already in flight: await it before the next one');
    if (inputs.length !== this.size)
      throw new PolicyError('invalid_input', `run needs one input per worker: got ${inputs.length}, the engine has ${this.size}`, {
        field: 'inputs',
      });
    const id = this.#nextId++;
    return new Promise<O[]>((resolve, reject) => {
      this.#pending = {
        id,
        results: new Array(this.size),
        remaining: this.size,
        resolve: resolve as (v: unknown[]) => void,
        reject,
        task: new Array(this.size).fill(0),
        reload: new Array(this.size).fill(0),
        t0: performance.now(),
      };
      for (const w of this.#workers) w.ref(); // a pending run keeps the process alive
      try {
        this.#workers.forEach((w, i) => w.postMessage({ type: 'run', id, moduleUrl, exportName, input: inputs[i] } satisfies ToWorker));
      } catch (e) {
        this.#settle();
        this.#fail(-1, `could not send the inputs: ${(e as Error).message}`, e);
      }
    });
  }

  /** Terminate every worker. Idempotent; a run in flight rejects. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const pending = this.#pending;
    this.#settle();
    pending?.reject(new PolicyError('engine_closed', 'the policy workers were closed during the run'));
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }

  #checkUsable(): void {
    if (this.#failure)
      throw new PolicyError(
        'engine_closed',
        `the policy workers are unusable after a failure (${this.#failure.message}); start a new engine`,
        {},
        { cause: this.#failure },
      );
    if (this.#closed) throw new PolicyError('engine_closed', 'the policy workers were closed');
  }

  #onMessage(i: number, m: FromWorker): void {
    if (m.type === 'ready') {
      const s = this.#starting;
      if (s && ++s.ready === this.size) {
        this.#starting = null;
        s.resolve();
      }
      return;
    }
    if (m.type === 'error') {
      this.#fail(i, `${m.id === null ? 'failed to start' : 'threw'} ${describe(m.error)}`, rebuild(m.error));
      return;
    }
    const p = this.#pending;
    if (!p || p.id !== m.id) return;
    p.results[i] = m.value;
    p.task[i] = m.taskSeconds;
    p.reload[i] = m.reloadSeconds;
    if (--p.remaining === 0) {
      this.#lastRun = { wall: (performance.now() - p.t0) / 1000, task: p.task, reload: p.reload };
      this.#reloadSeconds += Math.max(...p.reload);
      this.#settle();
      p.resolve(p.results);
    }
  }

  #settle(): void {
    this.#pending = null;
    for (const w of this.#workers) w.unref();
  }

  /** The first failure wins: close the engine and reject whatever waits, naming the worker. */
  #fail(i: number, what: string, cause: unknown): void {
    if (this.#failure || this.#closed) return;
    const who = i < 0 ? 'policy workers' : `policy worker ${i} of ${this.size}`;
    this.#failure = new PolicyError('worker_failed', `${who} ${what}; the engine is closed, start a new one`, {}, { cause });
    this.#closed = true;
    for (const w of this.#workers) void w.terminate();
    const pending = this.#pending;
    const starting = this.#starting;
    this.#settle();
    this.#starting = null;
    pending?.reject(this.#failure);
    starting?.reject(this.#failure);
  }
}

function describe(e: WorkerErrorInfo): string {
  return `${e.name}: ${e.message}`;
}

function rebuild(info: WorkerErrorInfo): Error {
  const e = new Error(info.message);
  e.name = info.name;
  if (info.stack !== undefined) e.stack = info.stack;
  if (info.code !== undefined) Object.assign(e, { code: info.code });
  return e;
}

/** `model`'s parameters in `layout` order, read asynchronously. */
async function hostParams(model: Qwen3Model, layout: ParamLayout): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (const slot of layout.slots) {
    const v = model.params.get(slot.name);
    if (v === undefined) throw new PolicyError('missing_tensor', 'parameter not in the model', { tensor: slot.name });
    out.push((await v.data()) as Float32Array);
  }
  return out;
}
