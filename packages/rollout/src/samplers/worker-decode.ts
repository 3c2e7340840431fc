import { randomUUID } from 'node:crypto';
import { compiledModuleUrl, type PolicyWorkers } from '@rlvr/policy';
import type { DecodeExecutor } from './decode-batch.js';
import { DecodeLane } from './decode-lane.js';
import type { DecodeRow } from './decode-row.js';
import type { DecodeLaneInput } from './workers/decode-task.js';

let taskUrl: string | null = null;
const decodeTaskUrl = (): string => (taskUrl ??= compiledModuleUrl(new URL('./workers/decode-task.js', import.meta.url)));

interface WorkerDecodeOptions {
  /** rows one worker decodes together at most (the executor's capacity is `workers x` this) */
  capacityPerWorker: number;
  /** the id fed where a row has no token (masked out) */
  padTokenId: number;
}

/**
 * A decode executor on policy workers: one lane per worker, each a continuous batch like
 * `DecodeBatch`. The rows (`DecodeRow`: sampling, stop strings, streaming) stay in this thread;
 * each lane's KV cache lives in its worker (`workers/decode-task.ts`, the same `DecodeCache` as
 * the in-process batch). A step picks every live row's token from its lane's last logits, then one
 * `engine.run` sends each worker its lane's `CacheStep` (the live slots' last tokens and mask, the
 * slots kept, the joining prompts) and brings back that lane's `[slots, V]` logits. Admitted rows
 * go, one by one, to the lane with the most room (the first of equals), so the layout depends on
 * the order of admissions and ends only.
 *
 * The replicas decode with the weights last published to `engine` (publish the model first). A
 * worker that fails fails the step with its error (the engine is then closed, and every later step
 * throws the engine's error). `dispose()` forgets the rows; the workers drop their caches at the
 * next step.
 */
export class WorkerDecodeExecutor implements DecodeExecutor {
  readonly capacity: number;
  private readonly engine: PolicyWorkers;
  private readonly o: WorkerDecodeOptions;
  private readonly V: number;
  private readonly id = randomUUID();
  private readonly lanes: DecodeLane[];
  /** per lane: `[slots, V]` logits of its last step */
  private logits: (Float32Array | null)[];
  /** per lane: its worker holds a cache */
  private held: boolean[];
  /** per lane: drop the worker's cache before the next step (disposed since) */
  private stale: boolean[];
  /** the error of the step that found the engine failed */
  private failed: Error | null = null;

  constructor(engine: PolicyWorkers, vocabSize: number, options: WorkerDecodeOptions) {
    this.engine = engine;
    this.o = options;
    this.V = vocabSize;
    this.capacity = engine.size * options.capacityPerWorker;
    this.lanes = Array.from({ length: engine.size }, () => new DecodeLane(options.padTokenId));
    this.logits = this.lanes.map(() => null);
    this.held = this.lanes.map(() => false);
    this.stale = this.lanes.map(() => false);
  }

  get size(): number {
    return this.lanes.reduce((n, l) => n + l.size, 0);
  }

  admit(rows: readonly DecodeRow[]): void {
    for (const row of rows) {
      let best = 0;
      for (let i = 1; i < this.lanes.length; i++) if (this.lanes[i]!.size < this.lanes[best]!.size) best = i;
      this.lanes[best]!.admit([row]);
    }
  }

  async step(): Promise<DecodeRow[]> {
    const ended: DecodeRow[] = [];
    const inputs = this.lanes.map((lane, i): DecodeLaneInput | null => {
      ended.push(...lane.collect(this.logits[i] ?? null, this.V));
      this.logits[i] = null;
      const reset = this.stale[i]!;
      this.stale[i] = false;
      if (lane.idle) {
        lane.reset();
        const drop = this.held[i]! || reset;
        this.held[i] = false;
        return drop ? { executor: this.id, padTokenId: this.o.padTokenId, reset: true, step: null } : null;
      }
      this.held[i] = true;
      return { executor: this.id, padTokenId: this.o.padTokenId, reset, step: lane.plan() };
    });
    if (inputs.every((x) => x === null)) return ended;
    let out: (Float32Array | null)[];
    try {
      out = await this.engine.run<DecodeLaneInput | null, Float32Array | null>(decodeTaskUrl(), 'decodeLane', inputs);
    } catch (e) {
      if (!this.engine.usable) this.failed ??= e as Error;
      throw e;
    }
    out.forEach((logits, i) => {
      this.logits[i] = logits;
    });
    return ended;
  }

  /**
   * Why the workers cannot decode any more, or null while they can: the error that failed a step
   * (a worker that threw, exited or crashed names itself), else the engine's own refusal (a worker
   * that died between steps, or `close()`).
   */
  failure(): Error | null {
    if (this.engine.usable) return null;
    if (this.failed !== null) return this.failed;
    try {
      // an unusable engine refuses every call with the reason, before it looks at the inputs
      void this.engine.run(decodeTaskUrl(), 'decodeLane', []);
    } catch (e) {
      return e as Error;
    }
    return new Error('the policy workers are closed');
  }

  dispose(): void {
    this.lanes.forEach((lane, i) => {
      lane.dispose();
      this.logits[i] = null;
      if (this.held[i]) this.stale[i] = true;
      this.held[i] = false;
    });
  }
}
