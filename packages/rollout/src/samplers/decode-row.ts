/**
 * One completion being decoded: its prompt, its sampling parameters, its random stream, the
 * tokens so far and the rules that end it. Everything here runs on the host, one row of logits
 * `[V]` at a time, so a decode batch (in process today, in worker threads later) only moves
 * logits and token ids.
 */
import { Rng, type FinishReason } from '@rlvr/core';
import type { TokenBytes } from '@rlvr/core';
import type { SamplingParams } from './sampler.js';
import { StopMatcher } from './stop-matcher.js';
import { pickToken, topLogprobs } from './token-sampling.js';

/**
 * What a row is decoded with: the sampler contract's `SamplingParams` plus the OpenAI / vLLM
 * parameters a server takes. Logit changes apply in this order, as in vLLM: `allowedTokenIds`,
 * `logitBias`, the EOS mask of `minTokens`, `repetitionPenalty` (prompt and output tokens, HF's
 * rule: positive logits divided, negative multiplied), then `frequencyPenalty` (times the count of
 * the token in the output) and `presencePenalty` (once per token in the output); then temperature,
 * top-k, top-p, min-p. Behaviour log-probs are log-softmax(processed logits / T) over the vocabulary.
 */
export interface DecodeParams extends SamplingParams {
  minP?: number;
  /** EOS and `stopTokenIds` are masked, and stop strings not looked for, before this many tokens */
  minTokens?: number;
  /** EOS does not end the completion (it may still be sampled) */
  ignoreEos?: boolean;
  /** ids that end the completion like EOS; `stopReason` is the id */
  stopTokenIds?: readonly number[];
  /** keep the stop string (or stop token) in the text */
  includeStopStrInOutput?: boolean;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** 1 = off */
  repetitionPenalty?: number;
  /** added to the logits of these ids */
  logitBias?: ReadonlyMap<number, number>;
  /** only these ids may be sampled */
  allowedTokenIds?: readonly number[];
  /** the k most likely alternatives (with log-probs) at each position */
  topLogprobs?: number;
}

/** Why a row ended: by its length limit, or by EOS (`stopReason` null), a stop string or a stop token id. */
export interface RowEnd {
  finish: Extract<FinishReason, 'stop' | 'length'>;
  stopReason: string | number | null;
}

/** Called after each token of a row, for streaming. */
export type RowListener = (row: DecodeRow) => void;

export class DecodeRow {
  readonly prompt: readonly number[];
  readonly params: DecodeParams;
  readonly tokens: number[] = [];
  readonly logprobs: number[] = [];
  /** per position, the `topLogprobs` most likely `[id, logprob]` (when asked for) */
  readonly top: [number, number][][] = [];
  end: RowEnd | null = null;
  /** set when the row was dropped before it ended (a client went away) */
  cancelled = false;
  readonly matcher: StopMatcher;
  private readonly rng: Rng;
  private readonly eos: ReadonlySet<number>;
  private readonly bytes: TokenBytes;
  private readonly onToken: RowListener | undefined;
  private readonly counts = new Map<number, number>();
  private readonly stopIds: ReadonlySet<number>;
  private readonly allowed: ReadonlySet<number> | null;
  private seen: Set<number> | null = null;
  private scratch: Float32Array | null = null;

  /**
   * @param index  which of the request's `n` completions this is: row j draws from `Rng(policy|seed|j)`
   * @param eos    ids that end a completion (unless `ignoreEos`)
   * @param bytes  the bytes each token adds to the text (special tokens: none, unless the server keeps them)
   */
  constructor(
    prompt: readonly number[],
    params: DecodeParams,
    index: number,
    eos: ReadonlySet<number>,
    bytes: TokenBytes,
    onToken?: RowListener,
  ) {
    this.prompt = prompt;
    this.params = params;
    this.rng = new Rng(`policy|${params.seed}|${index}`);
    this.eos = eos;
    this.bytes = bytes;
    this.onToken = onToken;
    this.matcher = new StopMatcher(params.stop);
    this.stopIds = new Set(params.stopTokenIds ?? []);
    this.allowed = params.allowedTokenIds === undefined ? null : new Set(params.allowedTokenIds);
  }

  get done(): boolean {
    return this.end !== null || this.cancelled;
  }

  /** The completion text (UTF-8 bytes), cut at the stop string or stop token unless `includeStopStrInOutput`. */
  text(): Uint8Array {
    return this.matcher.text(this.params.includeStopStrInOutput === true);
  }

  /** Pick the next token from this row's logits `[V]` (not modified) and apply the end rules. */
  choose(logits: Float32Array): void {
    const p = this.params;
    const x = this.processed(logits);
    const { id, logprob } = pickToken(x, p, this.rng);
    this.tokens.push(id);
    this.logprobs.push(logprob);
    if ((p.topLogprobs ?? 0) > 0) this.top.push(topLogprobs(x, p.topLogprobs!, p.temperature));
    this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
    this.seen?.add(id);
    const n = this.tokens.length;
    const canStop = n >= (p.minTokens ?? 0);
    const before = this.matcher.length;
    const hitString = this.matcher.push(this.bytes.tokenBytes(id), canStop);
    if (!p.ignoreEos && this.eos.has(id)) this.end = { finish: 'stop', stopReason: null };
    else if (this.stopIds.has(id)) {
      this.end = { finish: 'stop', stopReason: id };
      if (!p.includeStopStrInOutput) this.matcher.cut(before);
    } else if (hitString) this.end = { finish: 'stop', stopReason: this.matcher.matched };
    else if (n >= p.maxNewTokens) this.end = { finish: 'length', stopReason: null };
    this.onToken?.(this);
  }

  /** The logits after every logit change the parameters ask for (the input itself when none does). */
  private processed(logits: Float32Array): Float32Array {
    const p = this.params;
    const rep = p.repetitionPenalty ?? 1;
    const masksEos = (p.minTokens ?? 0) > this.tokens.length;
    const active =
      this.allowed !== null ||
      (p.logitBias?.size ?? 0) > 0 ||
      masksEos ||
      rep !== 1 ||
      (p.frequencyPenalty ?? 0) !== 0 ||
      (p.presencePenalty ?? 0) !== 0;
    if (!active) return logits;
    this.scratch ??= new Float32Array(logits.length);
    const x = this.scratch;
    if (this.allowed !== null) {
      x.fill(-Infinity);
      for (const id of this.allowed) if (id < x.length) x[id] = logits[id]!;
    } else x.set(logits);
    for (const [id, b] of p.logitBias ?? []) if (id < x.length) x[id] = x[id]! + b;
    if (masksEos) {
      if (!p.ignoreEos) for (const id of this.eos) if (id < x.length) x[id] = -Infinity;
      for (const id of this.stopIds) if (id < x.length) x[id] = -Infinity;
    }
    if (rep !== 1) {
      this.seen ??= new Set([...this.prompt, ...this.tokens]);
      for (const id of this.seen) if (id < x.length) x[id] = x[id]! > 0 ? x[id]! / rep : x[id]! * rep;
    }
    const freq = p.frequencyPenalty ?? 0;
    const pres = p.presencePenalty ?? 0;
    if (freq !== 0 || pres !== 0) for (const [id, c] of this.counts) x[id] = x[id]! - freq * c - pres;
    return x;
  }
}
