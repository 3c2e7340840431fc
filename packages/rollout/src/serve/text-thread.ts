/**
 * The text thread of `rlvr-serve`: one worker thread that parses, templates and tokenizes the
 * request bodies too big to handle in the server's thread (and chat templates that requests bring),
 * so that `/health` and the decode loop never wait behind a 10 MB `/tokenize`. Bodies run one at a
 * time, in arrival order. One that runs longer than `timeoutMs` (a hostile template) is a 400; the
 * thread is then replaced, as it is after a crash.
 */
import { Worker } from 'node:worker_threads';
import { compiledModuleUrl } from '@rlvr/policy';
import { HttpError } from './http.js';
import type { Prepared, TextEngine, TextRoute } from './requests.js';

/** What the text thread loads: the model directory's tokenizer (or `tokenizer`, a spec) and chat template. */
export interface TextThreadInit {
  dir: string;
  tokenizer?: string;
  limits: Pick<TextEngine, 'servedModelName' | 'context' | 'vocab' | 'defaultMaxTokens' | 'maxRowsPerRequest'>;
}

export interface TextTask {
  id: number;
  route: TextRoute;
  body: Uint8Array;
}

type Failure = { id: number; ok: false; status: number; message: string; param: string | null };
/** The worker's answer: `Prepared` with the ids as `Int32Array`s and the answer's JSON as bytes (both moved, not copied). */
export type TextReply =
  | Failure
  | { id: number; ok: true; kind: 'answer'; json: Uint8Array }
  | {
      id: number;
      ok: true;
      kind: 'completions';
      request: Extract<Prepared, { kind: 'completions' }>['request'];
      prompts: Int32Array[];
      maxTokens: number;
    }
  | { id: number; ok: true; kind: 'chat'; request: Extract<Prepared, { kind: 'chat' }>['request']; ids: Int32Array; maxTokens: number };

/** A prepared request as the server thread uses it: the answer's JSON as text (this thread) or bytes (the text thread). */
export type ThreadPrepared = Exclude<Prepared, { kind: 'answer' }> | { kind: 'answer'; json: string | Uint8Array };

interface Job {
  task: TextTask;
  resolve: (p: ThreadPrepared) => void;
  reject: (e: Error) => void;
}

export class TextThread {
  readonly #init: TextThreadInit;
  readonly #timeoutMs: number;
  readonly #queue: Job[] = [];
  #worker: Worker | null = null;
  #ready: Promise<void> | null = null;
  #current: { job: Job; timer: NodeJS.Timeout | undefined } | null = null;
  #nextId = 0;
  #closed = false;

  private constructor(init: TextThreadInit, timeoutMs: number) {
    this.#init = init;
    this.#timeoutMs = timeoutMs;
  }

  /** Start the thread; resolves once its tokenizer is loaded (rejects with its error). */
  static async start(init: TextThreadInit, { timeoutMs }: { timeoutMs: number }): Promise<TextThread> {
    const t = new TextThread(init, timeoutMs);
    await t.#spawn();
    return t;
  }

  /** The text side of a request body, run in the thread; a bad request rejects with its `HttpError`. */
  run(route: TextRoute, body: Buffer): Promise<ThreadPrepared> {
    if (this.#closed) return Promise.reject(new HttpError(503, 'the server is shutting down'));
    // moved to the thread, not copied, when the body owns its memory (big ones do; small ones share Node's pool)
    const own = body.byteOffset === 0 && body.buffer.byteLength === body.byteLength ? new Uint8Array(body.buffer) : Uint8Array.from(body);
    return new Promise((resolve, reject) => {
      this.#queue.push({ task: { id: this.#nextId++, route, body: own }, resolve, reject });
      this.#next();
    });
  }

  /** Bodies waiting, and the one running. */
  get pending(): number {
    return this.#queue.length + (this.#current === null ? 0 : 1);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.reject(new HttpError(503, 'the server is shutting down'));
    await this.#worker?.terminate();
  }

  #spawn(): Promise<void> {
    const w = new Worker(new URL(compiledModuleUrl(new URL('./text-worker.js', import.meta.url))), { workerData: this.#init });
    this.#worker = w;
    this.#ready = new Promise<void>((resolve, reject) => {
      w.on('message', (m: TextReply | { ready: true } | { failed: string }) => {
        if ('ready' in m) return resolve();
        if ('failed' in m) return reject(new Error(`the text thread could not load the tokenizer: ${m.failed}`));
        this.#settle(m);
      });
      w.on('error', (e) => {
        reject(e);
        this.#lost(w, `the text thread crashed: ${e.message}`);
      });
      w.on('exit', (code) => this.#lost(w, `the text thread exited with code ${code}`));
    });
    // held until it is ready (else a process waiting on nothing else exits), then it keeps no process alive
    return this.#ready.then(() => void w.unref());
  }

  #next(): void {
    if (this.#current !== null || this.#closed) return;
    const job = this.#queue.shift();
    if (job === undefined) return;
    const current: { job: Job; timer: NodeJS.Timeout | undefined } = { job, timer: undefined };
    this.#current = current;
    void this.#ready!.then(
      () => {
        if (this.#current !== current) return;
        // counted from when the thread has it (a fresh thread loads its tokenizer first)
        current.timer = setTimeout(() => {
          // a body that runs this long (a chat template that loops) would hold up every later one: drop the thread
          const w = this.#worker;
          this.#current = null;
          job.reject(
            new HttpError(400, `reading the request (parse, chat template, tokenizer) took longer than the limit of ${this.#timeoutMs} ms`),
          );
          this.#respawn(w);
        }, this.#timeoutMs);
        this.#worker!.postMessage(job.task, [job.task.body.buffer as ArrayBuffer]);
      },
      (e: Error) => this.#fail(job, e),
    );
  }

  #settle(m: TextReply): void {
    const c = this.#current;
    if (c === null || c.job.task.id !== m.id) return;
    clearTimeout(c.timer);
    this.#current = null;
    if (!m.ok) c.job.reject(new HttpError(m.status, m.message, m.param));
    else if (m.kind === 'answer') c.job.resolve({ kind: 'answer', json: m.json });
    else if (m.kind === 'completions')
      c.job.resolve({ kind: 'completions', request: m.request, prompts: m.prompts.map((a) => Array.from(a)), maxTokens: m.maxTokens });
    else c.job.resolve({ kind: 'chat', request: m.request, ids: Array.from(m.ids), maxTokens: m.maxTokens });
    this.#next();
  }

  #fail(job: Job, e: Error): void {
    if (this.#current?.job === job) {
      clearTimeout(this.#current.timer);
      this.#current = null;
    }
    job.reject(new HttpError(503, e.message));
    this.#next();
  }

  /** The worker `w` went away (crashed, exited): fail its body and start another. */
  #lost(w: Worker, why: string): void {
    if (this.#closed || w !== this.#worker) return;
    const c = this.#current;
    if (c !== null) {
      clearTimeout(c.timer);
      this.#current = null;
      c.job.reject(new HttpError(503, why));
    }
    this.#respawn(w);
  }

  #respawn(old: Worker | null): void {
    this.#worker = null;
    void old?.terminate();
    if (this.#closed) return;
    this.#spawn().catch(() => undefined);
    this.#next();
  }
}
