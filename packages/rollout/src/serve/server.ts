import { randomInt, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { formatZodIssues, parseConfig, silentLogger, type Logger } from '@rlvr/core';
import type { Qwen3Model, Tokenizer } from '@rlvr/policy';
import { policySampler } from '../samplers/policy-sampler.js';
import type { ApplyChatTemplate } from '@rlvr/policy';
import type { PromptSamples, SamplingParams } from '../samplers/sampler.js';
import { chatChoice, completionChoice, ServeChatRequestSchema, ServeCompletionRequestSchema, unsupportedFeature, type TokenName } from './protocol.js';

export const PolicyServerOptionsSchema = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    /** 0 = a free port the OS picks (read it from `PolicyServer.port`) */
    port: z.number().int().min(0).max(65535).default(8000),
    /** the name clients put in `model` */
    servedModelName: z.string().min(1),
    /** rows decoded together (a request's n completions; larger n is decoded in several batches) */
    batchSize: z.number().int().min(1).default(16),
    /** `max_tokens` when a request leaves it out (OpenAI's default is 16) */
    defaultMaxTokens: z.number().int().min(1).default(16),
    maxBodyBytes: z.number().int().min(1).default(32 * 1024 * 1024),
  })
  .strict();
export type PolicyServerOptions = z.output<typeof PolicyServerOptionsSchema>;
export type PolicyServerOptionsInput = z.input<typeof PolicyServerOptionsSchema>;

/** What the server generates with. */
export interface ServedPolicy {
  model: Qwen3Model;
  tokenizer: Tokenizer;
  /** the model's chat template; without one, `/v1/chat/completions` answers 400 */
  applyChatTemplate?: ApplyChatTemplate;
}

export interface PolicyServer {
  /** `http://HOST:PORT/v1` */
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

/** An error answered with its HTTP status and an OpenAI-style error body. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/**
 * Serve a `@rlvr/policy` model over the OpenAI-compatible protocol as vLLM speaks it, so that
 * clients written for vLLM (the `httpSampler` of this package, evaluation harnesses) run against
 * it: `POST /v1/completions`, `POST /v1/chat/completions`, `GET /v1/models`, `GET /health`.
 *
 * Requests are decoded one at a time, in arrival order (a request's `n` completions and its list
 * of prompts are batched together; concurrent requests wait in a queue). A client that
 * disconnects cancels its request. Bad requests get a 400 naming the field; a wrong `model` a
 * 404; an unknown route a 404; a wrong method a 405; a body over `maxBodyBytes` a 413.
 */
export async function startPolicyServer(policy: ServedPolicy, options: PolicyServerOptionsInput, logger: Logger = silentLogger): Promise<PolicyServer> {
  const o = parseConfig(PolicyServerOptionsSchema, options, 'server');
  const { model, tokenizer } = policy;
  const sampler = policySampler(model, tokenizer, { batchSize: o.batchSize, name: o.servedModelName });
  const bytes = sampler.tokenBytes;
  const decoder = new TextDecoder();
  const pieceText = (id: number) => decoder.decode(bytes.tokenBytes(id));
  const created = Math.floor(Date.now() / 1000);
  const context = model.config.max_position_embeddings;
  let queue: Promise<unknown> = Promise.resolve();

  /** Run decoding jobs one at a time. */
  const serial = <T>(job: () => Promise<T>): Promise<T> => {
    const run = queue.then(job, job);
    queue = run.catch(() => undefined);
    return run;
  };

  const checkPrompt = (ids: number[], maxTokens: number, param: string): void => {
    if (ids.length === 0) throw new HttpError(400, 'the prompt is empty', param);
    const bad = ids.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= model.dims.V);
    if (bad >= 0) throw new HttpError(400, `token id ${ids[bad]} at position ${bad} is not in the vocabulary [0, ${model.dims.V})`, param);
    if (ids.length + maxTokens > context) {
      throw new HttpError(400, `This model's maximum context length is ${context} tokens. However, you requested ${ids.length + maxTokens} tokens (${ids.length} in the messages, ${maxTokens} in the completion).`, param);
    }
  };

  const paramsOf = (r: { temperature?: number | null; top_p?: number | null; top_k?: number | null; seed?: number | null; stop?: string | string[] | null; best_of?: number | null; n: number }, maxTokens: number): SamplingParams => {
    if (r.best_of != null && r.best_of !== r.n) throw new HttpError(400, 'best_of other than n is not supported', 'best_of');
    return {
      temperature: r.temperature ?? 1,
      topP: r.top_p ?? 1,
      topK: r.top_k == null || r.top_k <= 0 ? 0 : r.top_k,
      maxNewTokens: maxTokens,
      stop: r.stop == null ? [] : typeof r.stop === 'string' ? [r.stop] : r.stop.filter((s) => s.length > 0),
      seed: r.seed ?? randomInt(2 ** 31), // no seed: a fresh one, as vLLM does
    };
  };

  // token strings in the log-probs: special tokens by their text (`<|im_end|>`), others decoded
  const specialText = new Map([...tokenizer.specialTokens].map(([text, id]) => [id, text]));
  const tokenString = (id: number) => specialText.get(id) ?? pieceText(id);
  const name = (asIds: boolean): TokenName => (asIds ? (id) => `token_id:${id}` : tokenString);

  const generate = async (prompts: number[][], n: number, params: SamplingParams, signal: AbortSignal): Promise<PromptSamples[]> => {
    const out = await serial(() => {
      signal.throwIfAborted();
      return sampler.sample(prompts.map((tokens) => ({ prompt: { tokens }, n, params })), signal);
    });
    const failed = out.flatMap((r) => r.completions).find((c) => c.finish === 'error');
    if (failed) throw new HttpError(500, `generation failed: ${failed.error}`);
    return out;
  };

  const usage = (out: PromptSamples[]) => {
    const prompt = out.reduce((s, r) => s + r.promptTokens.length, 0);
    const completion = out.reduce((s, r) => s + r.completions.reduce((t, c) => t + c.tokens.length, 0), 0);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  };

  const checkModel = (m: string) => {
    if (m !== o.servedModelName) throw new HttpError(404, `The model \`${m}\` does not exist.`, 'model');
  };

  async function completions(body: unknown, signal: AbortSignal): Promise<unknown> {
    const r = parse(ServeCompletionRequestSchema, body);
    checkModel(r.model);
    const maxTokens = r.max_tokens ?? o.defaultMaxTokens;
    const list: (string | number[])[] = typeof r.prompt === 'string' || (r.prompt.length > 0 && typeof r.prompt[0] === 'number') ? [r.prompt as string | number[]] : (r.prompt as (string | number[])[]);
    if (list.length === 0) throw new HttpError(400, 'the prompt list is empty', 'prompt');
    const prompts = list.map((p, i) => {
      const ids = typeof p === 'string' ? tokenizer.encode(p) : p;
      checkPrompt(ids, maxTokens, list.length > 1 ? `prompt.${i}` : 'prompt');
      return ids;
    });
    const params = paramsOf(r, maxTokens);
    const out = await generate(prompts, r.n, params, signal);
    const choices = out.flatMap((res, i) => res.completions.map((c, j) => completionChoice(i * r.n + j, c, r.logprobs != null, name(r.return_tokens_as_token_ids === true), pieceText)));
    return { id: `cmpl-${randomUUID()}`, object: 'text_completion', created: Math.floor(Date.now() / 1000), model: o.servedModelName, choices, usage: usage(out) };
  }

  async function chat(body: unknown, signal: AbortSignal): Promise<unknown> {
    const r = parse(ServeChatRequestSchema, body);
    checkModel(r.model);
    if (!policy.applyChatTemplate) throw new HttpError(400, 'this model has no chat template: use /v1/completions', 'messages');
    const text = policy.applyChatTemplate(r.messages.map((m) => ({ role: m.role, content: m.content })), {
      addGenerationPrompt: r.add_generation_prompt ?? true,
      enableThinking: r.chat_template_kwargs?.enable_thinking ?? true,
    });
    const ids = tokenizer.encode(text);
    const maxTokens = r.max_completion_tokens ?? r.max_tokens ?? Math.max(1, context - ids.length); // chat default: the rest of the context
    checkPrompt(ids, maxTokens, 'messages');
    const out = await generate([ids], r.n, paramsOf(r, maxTokens), signal);
    const choices = out[0]!.completions.map((c, j) => chatChoice(j, c, r.logprobs === true, name(r.return_tokens_as_token_ids === true), (id) => bytes.tokenBytes(id)));
    return { id: `chatcmpl-${randomUUID()}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: o.servedModelName, choices, usage: usage(out) };
  }

  const models = () => ({
    object: 'list',
    data: [{ id: o.servedModelName, object: 'model', created, owned_by: 'rlvr', root: o.servedModelName, max_model_len: context }],
  });

  const server = createServer((req, res) => {
    void handle(req, res);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const ac = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) ac.abort(new Error('client disconnected'));
    };
    res.once('close', onClose);
    const path = (req.url ?? '/').split('?')[0]!;
    const started = performance.now();
    try {
      const routes: Record<string, { method: string; run: () => Promise<unknown> }> = {
        '/health': { method: 'GET', run: async () => undefined },
        '/v1/models': { method: 'GET', run: async () => models() },
        '/v1/completions': { method: 'POST', run: async () => completions(await readJson(req, o.maxBodyBytes), ac.signal) },
        '/v1/chat/completions': { method: 'POST', run: async () => chat(await readJson(req, o.maxBodyBytes), ac.signal) },
      };
      const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
      if (!route) throw new HttpError(404, `no route ${path} (routes: ${Object.keys(routes).join(', ')})`);
      if (req.method !== route.method) throw new HttpError(405, `${path} takes ${route.method}, not ${req.method}`);
      const result = await route.run();
      send(res, 200, result);
      logger.info(`${req.method} ${path} 200`, { ms: Math.round(performance.now() - started) });
    } catch (e) {
      if (ac.signal.aborted) return void logger.info(`${req.method} ${path}: client disconnected, request cancelled`);
      const err = e instanceof HttpError ? e : new HttpError(500, `internal error: ${(e as Error).message}`);
      if (err.status >= 500) logger.warn(`${req.method} ${path} ${err.status}: ${err.message}`);
      send(res, err.status, { object: 'error', error: { message: err.message, type: err.status === 404 ? 'NotFoundError' : err.status < 500 ? 'BadRequestError' : 'InternalServerError', param: err.param, code: err.status } });
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostInUrl = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${hostInUrl}:${port}/v1`,
    host: o.host,
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue;
    },
  };
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'the body must be a JSON object');
  const unsupported = unsupportedFeature(body as Record<string, unknown>);
  if (unsupported) throw new HttpError(400, unsupported.message, unsupported.param);
  const r = schema.safeParse(body);
  if (!r.success) throw new HttpError(400, `invalid request: ${formatZodIssues(r.error.issues)}`, r.error.issues[0]?.path.join('.') ?? null);
  return r.data;
}

async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, `the body is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (e) {
    throw new HttpError(400, `the body is not JSON: ${(e as Error).message}`);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed || res.headersSent) return;
  const payload = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}
