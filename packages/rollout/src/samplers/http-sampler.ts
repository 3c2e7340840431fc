import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { parseConfig, Rng, silentLogger, type Logger } from '@rlvr/core';
import { RolloutError } from '../errors.js';
import { echoes, parseResponse, requestBody, type RequestMode } from './http-protocol.js';
import { StreamAssembler } from './http-stream.js';
import type { PromptSamples, Sampler, SampleRequest } from './sampler.js';
import type { TokenBytes } from '@rlvr/core';

export const HttpSamplerOptionsSchema = z
  .object({
    /** the server's OpenAI base URL, e.g. `http://127.0.0.1:8000/v1` */
    baseUrl: z.url({ protocol: /^https?$/ }),
    /** the served model name */
    model: z.string().min(1),
    /** `completions` (prompt ids or text) or `chat` (messages; the server applies the chat template) */
    endpoint: z.enum(['completions', 'chat']).default('completions'),
    /** sent as `Authorization: Bearer ...` */
    apiKey: z.string().optional(),
    /** requests in flight at once (one request asks for all G completions of a prompt) */
    concurrency: z.number().int().min(1).max(1024).default(8),
    /**
     * Per attempt: from sending the request to the end of the body; with `stream`, the longest
     * wait for the next bytes of the stream (a generation that keeps streaming is never cut)
     */
    timeoutMs: z.number().int().min(1).default(600_000),
    /** retries after the first attempt, on 429, 5xx, connection errors, timeouts and unparseable bodies */
    maxRetries: z.number().int().min(0).max(100).default(4),
    /** backoff before retry k (0-based) is uniform in [0, min(backoffMaxMs, backoffBaseMs * 2^k)] ("full jitter") */
    backoffBaseMs: z.number().min(0).default(500),
    backoffMaxMs: z.number().min(0).default(30_000),
    /** added to every request body (e.g. `{"chat_template_kwargs": {"enable_thinking": false}}`); cannot replace the fields set from the sampling options */
    extraBody: z.record(z.string(), z.unknown()).default({}),
    /**
     * Receive each response as a server-sent event stream (`stream: true`, with the final usage
     * chunk), added up as it arrives to the same completions: tokens arrive as they are decoded,
     * so neither `timeoutMs` nor a proxy's idle timeout cuts a long generation.
     */
    stream: z.boolean().default(false),
    /**
     * Text prompts on `/v1/completions`: ask for the prompt back (`echo`), so that the batch gets
     * the prompt token ids the server conditioned on from the same request (else only a server
     * that returns `prompt_token_ids` gives them).
     */
    echo: z.boolean().default(false),
    /**
     * What each completion carries: `tokens` = the sampled token ids and their log-probs (what a
     * rollout batch needs: `logprobs: 0`, `return_tokens_as_token_ids`); `text` = the text and
     * finish reason only, no log-probs asked, with the request's token count from
     * `usage.completion_tokens` in `PromptSamples.completionTokens` (what an evaluation needs;
     * several times fewer bytes on the wire). `sampleGroups` refuses `text` samples.
     */
    returns: z.enum(['tokens', 'text']).default('tokens'),
  })
  .strict()
  .refine((o) => !(o.echo && o.returns === 'text'), {
    message: 'echo gives the prompt token ids through the log-probs: it needs returns "tokens"',
    path: ['echo'],
  });
export type HttpSamplerOptions = z.output<typeof HttpSamplerOptionsSchema>;
export type HttpSamplerOptionsInput = z.input<typeof HttpSamplerOptionsSchema>;

/** What the HTTP sampler reports as it goes: for metrics, progress and alerts. */
export type HttpSamplerEvent =
  | { type: 'response'; request: number; attempt: number; status: number; ms: number }
  | { type: 'retry'; request: number; attempt: number; reason: string; delayMs: number }
  | { type: 'failed'; request: number; attempts: number; reason: string };

export interface HttpSamplerHooks {
  logger?: Logger;
  onEvent?: (event: HttpSamplerEvent) => void;
  /** token bytes of the served model's tokenizer, so that `sampleGroups` can locate answer spans */
  tokenBytes?: TokenBytes;
}

/** The outcome of one attempt: a body, or a reason with whether another attempt may help. */
type Attempt =
  | { ok: true; json: unknown; status: number }
  | { ok: false; retry: boolean; reason: string; status?: number; retryAfterMs?: number };

/**
 * A sampler for OpenAI-compatible inference servers (vLLM, SGLang). One request
 * per prompt asks for its G completions (`n`). At most `concurrency` requests are
 * in flight. A request is retried with exponential backoff and full jitter on 429
 * (honouring `Retry-After`, capped at `backoffMaxMs`), 5xx, connection errors,
 * timeouts and bodies that are not JSON; a 4xx or a JSON body that breaks the
 * protocol is not retried. A request that fails for good yields G `error`
 * completions, an `onEvent({type: 'failed'})` and a logger warning; it is never
 * dropped. Every response is validated with zod.
 */
export function httpSampler(
  options: HttpSamplerOptionsInput,
  hooks: HttpSamplerHooks = {},
): Sampler & { readonly options: HttpSamplerOptions } {
  const o = parseConfig(HttpSamplerOptionsSchema, options, 'HTTP sampler');
  const url = o.baseUrl.replace(/\/+$/, '') + (o.endpoint === 'completions' ? '/completions' : '/chat/completions');
  const logger = hooks.logger ?? silentLogger;
  const emit = hooks.onEvent ?? (() => undefined);
  const jitter = new Rng('http-sampler-jitter');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: o.stream ? 'text/event-stream, application/json' : 'application/json',
  };
  if (o.apiKey !== undefined) headers.authorization = `Bearer ${o.apiKey}`;

  const mode: RequestMode = { stream: o.stream, echo: o.echo, returns: o.returns };

  async function attempt(body: string, signal: AbortSignal | undefined): Promise<Attempt> {
    // one timer: the whole attempt, or (re-armed at every piece of a stream) the wait for the next piece
    const timeout = new AbortController();
    let timer = setTimeout(() => timeout.abort(), o.timeoutMs);
    const rearm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => timeout.abort(), o.timeoutMs);
    };
    const both = signal ? AbortSignal.any([timeout.signal, signal]) : timeout.signal;
    let streaming = false;
    let res: Response | undefined;
    let text = '';
    let streamed: StreamAssembler | undefined;
    try {
      res = await fetch(url, { method: 'POST', headers, body, signal: both });
      streaming = o.stream && res.ok && (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
      if (streaming) {
        streamed = new StreamAssembler(o.endpoint);
        const decoder = new TextDecoder();
        for await (const piece of res.body ?? []) {
          rearm();
          streamed.push(decoder.decode(piece as Uint8Array, { stream: true }));
        }
        streamed.push(decoder.decode());
      } else text = await res.text();
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.signal.aborted)
        return {
          ok: false,
          retry: true,
          reason: streaming ? `stream: no data for ${o.timeoutMs} ms` : `timed out after ${o.timeoutMs} ms`,
        };
      if (e instanceof RolloutError) return { ok: false, retry: true, reason: `stream: ${e.message}` }; // a broken stream may heal
      return { ok: false, retry: true, reason: `connection error: ${describeFetchError(e)}` };
    } finally {
      clearTimeout(timer);
    }
    if (res.status === 429 || res.status >= 500) {
      return {
        ok: false,
        retry: true,
        status: res.status,
        reason: `HTTP ${res.status}: ${snippet(text)}`,
        retryAfterMs: retryAfter(res.headers.get('retry-after')),
      };
    }
    if (res.status < 200 || res.status >= 300)
      return { ok: false, retry: false, status: res.status, reason: `HTTP ${res.status}: ${snippet(text)}` };
    if (streamed !== undefined) {
      try {
        return { ok: true, json: streamed.finish(), status: res.status };
      } catch (e) {
        if (!(e instanceof RolloutError)) throw e;
        return { ok: false, retry: true, status: res.status, reason: `stream: ${e.message}` }; // a stream cut short may heal
      }
    }
    try {
      return { ok: true, json: JSON.parse(text), status: res.status };
    } catch {
      return { ok: false, retry: true, status: res.status, reason: `body is not JSON: ${snippet(text)}` };
    }
  }

  async function one(req: SampleRequest, index: number, signal: AbortSignal | undefined): Promise<PromptSamples> {
    const body = JSON.stringify(requestBody(o.endpoint, o.model, req.prompt, req.n, req.params, o.extraBody, mode));
    let reason = '';
    let attempts = 0;
    for (let k = 0; k <= o.maxRetries; k++) {
      attempts = k + 1;
      const t0 = performance.now();
      const a = await attempt(body, signal);
      if (a.ok) {
        emit({ type: 'response', request: index, attempt: k, status: a.status, ms: performance.now() - t0 });
        try {
          return parseResponse(o.endpoint, a.json, req.prompt, req.n, { echo: echoes(o.endpoint, req.prompt, mode), returns: o.returns });
        } catch (e) {
          if (!(e instanceof RolloutError)) throw e;
          reason = `invalid response: ${e.message}`; // a protocol mismatch does not heal on retry
          break;
        }
      }
      reason = a.reason;
      if (!a.retry || k === o.maxRetries) break;
      const cap = Math.min(o.backoffMaxMs, o.backoffBaseMs * 2 ** k);
      const delayMs = Math.min(o.backoffMaxMs, Math.max(jitter.float() * cap, a.retryAfterMs ?? 0));
      emit({ type: 'retry', request: index, attempt: k, reason, delayMs });
      try {
        await sleep(delayMs, undefined, signal ? { signal } : {});
      } catch (e) {
        throw signal?.aborted ? signal.reason : e;
      }
    }
    emit({ type: 'failed', request: index, attempts, reason });
    logger.warn(`request for prompt ${index} failed after ${attempts} attempt(s); its ${req.n} rollouts are marked "error": ${reason}`, {
      request: index,
      attempts,
      url,
    });
    const error = `${reason} (after ${attempts} attempt${attempts > 1 ? 's' : ''})`;
    return {
      promptTokens: req.prompt.tokens ?? [],
      completions: Array.from({ length: req.n }, () => ({ tokens: [], finish: 'error' as const, error })),
    };
  }

  const sampler = {
    name: `http:${o.endpoint}`,
    options: o,
    async sample(requests: readonly SampleRequest[], signal?: AbortSignal): Promise<PromptSamples[]> {
      // bad prompts fail here, before any request is sent
      requests.forEach((r, i) => {
        try {
          requestBody(o.endpoint, o.model, r.prompt, r.n, r.params, o.extraBody);
        } catch (e) {
          if (e instanceof RolloutError) throw new RolloutError(e.code, e.message, { rollout: i * r.n, field: 'prompt' }, { cause: e });
          throw e;
        }
      });
      return mapPool(requests, o.concurrency, (r, i) => one(r, i, signal));
    },
  };
  return hooks.tokenBytes ? { ...sampler, tokenBytes: hooks.tokenBytes } : sampler;
}

/** Run `fn` over `items` with at most `limit` in flight; results keep the order of `items`. */
export async function mapPool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** `Retry-After` in ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfter(header: string | null): number | undefined {
  if (header === null) return undefined;
  const s = Number(header);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const t = Date.parse(header);
  return Number.isNaN(t) ? undefined : Math.max(0, t - Date.now());
}

function describeFetchError(e: unknown): string {
  const err = e as { message?: string; cause?: { code?: string; message?: string } };
  const cause = err.cause?.code ?? err.cause?.message;
  return cause ? `${err.message ?? String(e)} (${cause})` : (err.message ?? String(e));
}

function snippet(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > 200 ? t.slice(0, 197) + '...' : t;
}
