/**
 * The worker threads of `POST /advantages`. A request's whole work (parse, estimate, write the JSON) runs in one of
 * them, so the server's event loop only moves bytes: `/health` and the other requests are answered while a large
 * batch is estimated. A worker that dies (out of memory) fails that request alone.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { AdvantageLimits } from './advantages-route.js';
import { RewardServerError } from './errors.js';
import type { AdvantagesTask, AdvantagesTaskResult } from './advantages-worker.js';

/**
 * The worker's file: a CommonJS entry that import()s advantages-worker.js (see advantages-worker-entry.cts: why
 * piscina must not require() an ES module). Built, it sits next to this module; under vitest this module runs from `src/*.ts`, and a
 * worker thread cannot load TypeScript, so the build's twin in `dist/` runs (the test target builds first).
 */
const WORKER = import.meta.url.endsWith('.ts')
  ? new URL('../dist/advantages-worker-entry.cjs', import.meta.url)
  : new URL('./advantages-worker-entry.cjs', import.meta.url);

export interface AdvantagesPoolOptions {
  /** worker threads (default: available parallelism, at most 4) */
  workers?: number | undefined;
  /** heap limit of each worker, MiB */
  workerMemoryMb: number;
  limits: AdvantageLimits;
}

export class AdvantagesPool {
  readonly workers: number;
  private readonly piscina: Piscina;
  private readonly limits: AdvantageLimits;

  constructor(options: AdvantagesPoolOptions) {
    this.workers = options.workers ?? Math.min(4, availableParallelism());
    this.limits = options.limits;
    this.piscina = new Piscina({
      filename: WORKER.href,
      minThreads: 1,
      maxThreads: this.workers,
      idleTimeout: 60_000,
      resourceLimits: { maxOldGenerationSizeMb: options.workerMemoryMb },
    });
  }

  /**
   * Answers one request: `{status, body}` (a 4xx for a refused request). `signal` (the client went away) takes the
   * task out of the queue, or stops the worker running it. Rejects with `RewardServerError('worker_failed')` when
   * the worker dies, and with the signal's reason when cancelled.
   */
  async run(body: Buffer, query: string, signal: AbortSignal): Promise<AdvantagesTaskResult> {
    // a copy in a buffer of its own: a small Buffer may be a slice of a shared pool, which must not be transferred
    const bytes = new Uint8Array(body.length);
    bytes.set(body);
    const task: AdvantagesTask = { body: bytes, query, limits: this.limits };
    try {
      return (await this.piscina.run(task, { transferList: [bytes.buffer], signal })) as AdvantagesTaskResult;
    } catch (err) {
      if (signal.aborted) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      const why =
        code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `ran out of memory (its heap is workerMemoryMb, --worker-memory-mb)`
          : `died: ${(err as Error).message}`;
      throw new RewardServerError(
        'worker_failed',
        `the /advantages worker ${why}; lower the tokens per request (maxAdvantageTokens) or raise the limit; the server carries on`,
        {},
        { cause: err },
      );
    }
  }

  close(): Promise<void> {
    return this.piscina.destroy();
  }
}
