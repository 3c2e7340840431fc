/**
 * A server-sent event stream of completion or chat chunks (vLLM's and OpenAI's shapes), added up
 * as it arrives into the one-shot response it stands for, which then goes through `parseResponse`
 * like any response: per choice index the text (or message content), the log-probs and token ids
 * concatenated, the last finish reason; `usage` from the final usage chunk.
 */
import { RolloutError } from '../errors.js';
import type { Endpoint } from './http-protocol.js';

interface Acc {
  index: number;
  text: string;
  tokens: string[];
  logprobs: (number | null)[];
  content: unknown[];
  tokenIds: number[] | null;
  finish: string | null;
  hasLogprobs: boolean;
}

/**
 * Feed it the body's text in pieces of any size (`push`), then `finish()`. Each event is folded in
 * when its blank line arrives, so memory holds the assembled choices, not the stream. Throws
 * `RolloutError('invalid_response')` for an event that is not JSON, an error event, and (at
 * `finish`) a stream that did not end with `[DONE]`.
 */
export class StreamAssembler {
  private pending = '';
  private done = false;
  private readonly acc = new Map<number, Acc>();
  private usage: unknown;
  private promptTokenIds: unknown;

  constructor(private readonly endpoint: Endpoint) {}

  /** Whether `[DONE]` has arrived. */
  get ended(): boolean {
    return this.done;
  }

  push(text: string): void {
    this.pending += text;
    const blocks = this.pending.split(/\r?\n\r?\n/);
    this.pending = blocks.pop()!; // the part after the last blank line may be an event still arriving
    for (const block of blocks) this.event(block);
  }

  /** The one-shot response. */
  finish(): unknown {
    if (this.pending.trim() !== '') this.event(this.pending);
    this.pending = '';
    if (!this.done) throw new RolloutError('invalid_response', 'the stream ended without [DONE]');
    const choices = [...this.acc.values()].map((a) =>
      this.endpoint === 'completions'
        ? {
            index: a.index,
            text: a.text,
            logprobs: a.hasLogprobs ? { tokens: a.tokens, token_logprobs: a.logprobs } : null,
            finish_reason: a.finish,
            ...(a.tokenIds ? { token_ids: a.tokenIds } : {}),
          }
        : {
            index: a.index,
            message: { content: a.text },
            logprobs: a.hasLogprobs ? { content: a.content } : null,
            finish_reason: a.finish,
            ...(a.tokenIds ? { token_ids: a.tokenIds } : {}),
          },
    );
    return {
      choices,
      ...(this.usage !== undefined ? { usage: this.usage } : {}),
      ...(this.promptTokenIds !== undefined ? { prompt_token_ids: this.promptTokenIds } : {}),
    };
  }

  private event(block: string): void {
    const lines = block.split(/\r?\n/).filter((l) => l.startsWith('data:'));
    if (lines.length === 0) return;
    const data = lines.map((l) => l.slice(5).replace(/^ /, '')).join('\n');
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      throw new RolloutError('invalid_response', `a stream event is not JSON: ${data.slice(0, 80)}`);
    }
    if (typeof event !== 'object' || event === null) throw new RolloutError('invalid_response', 'a stream event is not a JSON object');
    const e = event as Record<string, unknown>;
    const err = (e as { error?: { message?: string } }).error;
    if (err != null) throw new RolloutError('invalid_response', `the server failed mid-stream: ${err.message ?? JSON.stringify(err)}`);
    if (e.usage != null) this.usage = e.usage;
    if (e.prompt_token_ids != null) this.promptTokenIds = e.prompt_token_ids;
    // biome-ignore lint/suspicious/noExplicitAny: a stream chunk is untyped JSON; every field read below is checked
    for (const c of (Array.isArray(e.choices) ? e.choices : []) as Record<string, any>[]) {
      if (typeof c.index !== 'number') throw new RolloutError('invalid_response', 'a stream choice has no index');
      let a = this.acc.get(c.index);
      if (a === undefined) {
        a = { index: c.index, text: '', tokens: [], logprobs: [], content: [], tokenIds: null, finish: null, hasLogprobs: false };
        this.acc.set(c.index, a);
      }
      if (this.endpoint === 'completions') a.text += typeof c.text === 'string' ? c.text : '';
      else a.text += typeof c.delta?.content === 'string' ? c.delta.content : '';
      if (c.logprobs != null) {
        a.hasLogprobs = true;
        if (this.endpoint === 'completions') {
          a.tokens.push(...(c.logprobs.tokens ?? []));
          a.logprobs.push(...(c.logprobs.token_logprobs ?? []));
        } else a.content.push(...(c.logprobs.content ?? []));
      }
      if (Array.isArray(c.token_ids)) a.tokenIds = c.token_ids as number[];
      if (c.finish_reason != null) a.finish = c.finish_reason as string;
    }
  }
}

/** A whole stream's text, added up (`StreamAssembler` in one piece). */
export function assembleStream(endpoint: Endpoint, text: string): unknown {
  const a = new StreamAssembler(endpoint);
  a.push(text);
  return a.finish();
}
