/**
 * The two ways `runEval` samples: a local model directory (the `@rlvr/policy` KV-cache sampler,
 * prompts rendered and tokenized here) and an OpenAI-compatible server (vLLM, SGLang,
 * `rlvr-serve`). Each checks what it can before any sampling: the model loads and every prompt
 * fits its context; the server answers `GET /models`.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import type { ErrorLocation } from '@rlvr/core';
import { PolicyWorkers, loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import type { BackendName, Qwen3Model, Tokenizer } from '@rlvr/policy';
import {
  chatmlTemplate,
  httpSampler,
  modelChatTemplate,
  plainChatTemplate,
  policySampler,
  promptBuilder,
  workerSampler,
} from '@rlvr/rollout';
import type { ApplyChatTemplate, PromptBuilder, SamplePrompt, Sampler } from '@rlvr/rollout';
import { EvaluationError } from './errors.js';
import { SampleFailure } from './evaluate.js';
import type { EvalOptions } from './options.js';

/** The new-token limit of the reference protocol (and the default where the context allows it). */
export const DEFAULT_MAX_TOKENS = 8192;

/** What was sampled from. */
export type EvalPolicy =
  | { kind: 'model'; dir: string; parameters: number; backend: string; eosTokenIds: number[]; template: string }
  | { kind: 'endpoint'; url: string; model: string; api: 'completions' | 'chat'; template: string };

/** A question to render, with where it first appears (for errors about it). */
export interface Question {
  text: string;
  location: ErrorLocation;
}

/** A way to sample: the sampler, the prompt of each question, the token limit, cleanup. */
export interface Engine {
  policy: EvalPolicy;
  sampler: Sampler;
  prompts: Map<string, SamplePrompt>;
  maxTokens: number;
  /** problems per `sample` call: the progress granularity */
  chunk: number;
  /** set by the caller: called once per problem answered, for samplers that report as they go */
  onAnswered?: (() => void) | undefined;
  /** the completion text when the sampler returned none */
  text(tokens: readonly number[]): string;
  close(): void;
}

export interface EngineLogger {
  info(message: string): void;
  warn?(message: string): void;
}

function templateOf(name: 'plain' | 'chatml'): ApplyChatTemplate {
  return name === 'plain' ? plainChatTemplate : chatmlTemplate;
}

/** The local model: loaded once, prompts tokenized here (special tokens of the template parsed, as a server does). */
export async function localEngine(o: EvalOptions, dir: string, questions: readonly Question[], logger: EngineLogger): Promise<Engine> {
  if (!existsSync(join(dir, 'config.json')))
    throw new EvaluationError('missing_file', 'model directory not found (no config.json there)', { file: dir });
  let backend: string;
  try {
    backend = await selectBackend({ backend: o.backend }, { info: logger.info });
  } catch (err) {
    throw new EvaluationError('invalid_options', (err as Error).message, { field: 'backend' }, { cause: err });
  }
  let model: Qwen3Model | undefined;
  let tokenizer: Tokenizer | undefined;
  try {
    model = loadModel(dir, { trainable: false });
    tokenizer = loadTokenizer(dir);
  } catch (err) {
    model?.dispose();
    throw new EvaluationError('load_failed', `cannot load the model: ${(err as Error).message}`, { file: dir }, { cause: err });
  }
  const m = model;
  const tok = tokenizer;
  let workers: PolicyWorkers | undefined;
  const close = () => {
    // idle workers keep nothing alive: their termination finishes in the background
    void workers?.close();
    m.dispose();
    tok.free();
  };
  try {
    const which = o.template ?? 'model';
    let apply: ApplyChatTemplate;
    let template: string = which;
    if (which === 'model') {
      const t = modelChatTemplate(dir, tok);
      apply = t.apply ?? plainChatTemplate;
      template = t.source === 'none' ? 'plain' : t.source;
    } else apply = templateOf(which);
    const builder = promptBuilder({}, apply);
    const prompts = new Map<string, SamplePrompt>();
    let longest = { tokens: 0, at: {} as ErrorLocation };
    for (const q of questions) {
      let tokens: number[];
      try {
        tokens = tok.encode(builder.text(q.text));
      } catch (err) {
        throw new EvaluationError(
          'invalid_record',
          `cannot tokenize the question (${q.text.length} characters): ${(err as Error).message}`,
          q.location,
          { cause: err },
        );
      }
      if (tokens.length > longest.tokens) longest = { tokens: tokens.length, at: q.location };
      prompts.set(q.text, { tokens });
    }
    const context = m.config.max_position_embeddings;
    const room = context - longest.tokens;
    if (room < 1)
      throw new EvaluationError(
        'invalid_options',
        `the prompt has ${longest.tokens} tokens: no room left in the model's context of ${context} tokens`,
        longest.at,
      );
    if (o.maxTokens !== undefined && o.maxTokens > room) {
      throw new EvaluationError(
        'invalid_options',
        `max tokens ${o.maxTokens} does not fit: the longest prompt has ${longest.tokens} tokens and the model's context is ${context} (at most ${room})`,
        longest.at,
      );
    }
    const local = policySampler(m, tok, { batchSize: o.batchSize });
    const eos = [...local.eosTokenIds];
    if (eos.length === 0)
      throw new EvaluationError(
        'load_failed',
        'the model has no eos_token_id and its tokenizer no <|im_end|> or <|endoftext|>: completions could not end',
        { file: join(dir, 'config.json'), field: 'eos_token_id' },
      );
    const eosSet = new Set(eos);
    const threads = o.workers === 'auto' ? availableParallelism() : o.workers;
    if (threads > 1) workers = await PolicyWorkers.start(m, { workers: threads, backend: backend as BackendName });
    const sampler =
      workers === undefined
        ? local
        : workerSampler(workers, m, local, { modelDir: dir, options: { batchSize: o.batchSize, eosTokenIds: eos } });
    return {
      policy: { kind: 'model', dir: resolve(dir), parameters: m.numParameters(), backend, eosTokenIds: eos, template },
      sampler,
      prompts,
      maxTokens: o.maxTokens ?? Math.min(DEFAULT_MAX_TOKENS, room),
      // about four decoding batches per call
      chunk: Math.max(1, Math.ceil((4 * o.batchSize) / o.n)),
      text: (tokens) => tok.decode(tokens.filter((id) => !eosSet.has(id))),
      close,
    };
  } catch (err) {
    close();
    throw err;
  }
}

/** The OpenAI base URL: `http://host:8000` means `http://host:8000/v1`. */
export function baseUrlOf(endpoint: string): string {
  const u = new URL(endpoint);
  const path = u.pathname.replace(/\/+$/, '');
  return `${u.origin}${path === '' ? '/v1' : path}`;
}

/** An OpenAI-compatible server: GET /models checks that it answers and names the model. */
export async function endpointEngine(
  o: EvalOptions,
  endpoint: string,
  questions: readonly Question[],
  logger: EngineLogger,
): Promise<Engine> {
  const base = baseUrlOf(endpoint);
  const listed = await listModels(base, o.apiKey);
  const name = o.modelName ?? listed[0]?.id;
  if (name === undefined) throw new EvaluationError('server_error', `${base}/models lists no model: pass --model-name`);
  const served = listed.find((x) => x.id === name);
  if (o.modelName !== undefined && served === undefined)
    logger.warn?.(`${base}/models does not list ${name} (it lists ${listed.map((x) => x.id).join(', ') || 'nothing'})`);
  const api = o.chat ? 'chat' : 'completions';
  // the text rendered here: the chosen layout, plain where the server's template was asked for and /tokenize is missing
  const builder: PromptBuilder = promptBuilder({}, o.chat ? chatmlTemplate : templateOf(o.template === 'chatml' ? 'chatml' : 'plain'));
  // the server's POST /tokenize (vLLM, rlvr-serve) renders the model's chat template and counts every prompt exactly,
  // so an endpoint gets the local model's prompts and token budget
  const exact = await tokenizeAll(base, o, name, questions, builder, logger);
  const template = o.chat ? 'server' : exact === undefined ? (o.template ?? 'plain') : (o.template ?? 'model');
  if (exact === undefined && template === 'model')
    throw new EvaluationError(
      'server_error',
      `${tokenizeUrl(base)} is not available: the model's template needs it; use --template plain|chatml or --chat`,
    );
  const prompts = new Map<string, SamplePrompt>();
  let longest = { tokens: 0, at: {} as ErrorLocation };
  const te = new TextEncoder();
  for (const q of questions) {
    const ids = exact?.ids.get(q.text);
    prompts.set(
      q.text,
      o.chat ? { messages: builder.messages(q.text) } : template === 'model' ? { tokens: ids! } : { text: builder.text(q.text) },
    );
    // without /tokenize, bytes bound the tokens of a byte-level BPE tokenizer (the chat case estimated from ChatML)
    const tokens = ids?.length ?? te.encode(builder.text(q.text)).length + (o.chat ? 32 : 0);
    if (tokens > longest.tokens) longest = { tokens, at: q.location };
  }
  let maxTokens = o.maxTokens ?? DEFAULT_MAX_TOKENS;
  const context = served?.maxModelLen ?? exact?.maxModelLen;
  if (context !== undefined && exact !== undefined && o.maxTokens !== undefined && o.maxTokens > context - longest.tokens)
    throw new EvaluationError(
      'invalid_options',
      `max tokens ${o.maxTokens} does not fit: the longest prompt has ${longest.tokens} tokens and the server's context is ${context} (at most ${context - longest.tokens})`,
      longest.at,
    );
  if (o.maxTokens === undefined && context !== undefined && context - longest.tokens < maxTokens) {
    maxTokens = context - longest.tokens;
    if (maxTokens < 1)
      throw new EvaluationError(
        'invalid_options',
        `no room for a default max tokens: the server's context is ${context} tokens and this prompt ${exact === undefined ? 'may take up to' : 'has'} ${longest.tokens}; set it (--max-tokens)`,
        longest.at,
      );
  }
  // The first request that fails for good stops the call: the evaluation cannot be complete.
  let stop: ((failure: SampleFailure) => void) | undefined;
  const http = httpSampler(
    {
      baseUrl: base,
      model: name,
      endpoint: api,
      concurrency: o.concurrency,
      stream: o.stream,
      returns: o.tokenIds ? 'tokens' : 'text',
      ...(o.apiKey === undefined ? {} : { apiKey: o.apiKey }),
      ...(o.chat ? { extraBody: { chat_template_kwargs: { enable_thinking: false } } } : {}),
    },
    {
      onEvent: (e) => {
        if (e.type === 'retry') logger.warn?.(`request retried (${e.reason}); next try in ${(e.delayMs / 1000).toFixed(1)} s`);
        else if (e.type === 'failed')
          stop?.(new SampleFailure(e.request, `${e.reason} (after ${e.attempts} attempt${e.attempts > 1 ? 's' : ''})`));
        else engine.onAnswered?.();
      },
    },
  );
  const sampler: Sampler = {
    name: http.name,
    async sample(requests, signal) {
      const controller = new AbortController();
      const onAbort = () => controller.abort(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      let failed: SampleFailure | undefined;
      stop = (f) => {
        failed ??= f;
        controller.abort(f);
      };
      try {
        return await http.sample(requests, controller.signal);
      } catch (err) {
        throw failed ?? err;
      } finally {
        stop = undefined;
        signal?.removeEventListener('abort', onAbort);
      }
    },
  };
  const engine: Engine = {
    policy: { kind: 'endpoint', url: base, model: name, api, template },
    sampler,
    prompts,
    maxTokens,
    // one call per dataset keeps `concurrency` requests in flight to the end; progress comes per response
    chunk: Infinity,
    text: () => '',
    close() {},
  };
  return engine;
}

/** `{root}/tokenize`: vLLM serves it beside `/v1`, not under it. */
const tokenizeUrl = (base: string): string => `${base.replace(/\/v1$/, '')}/tokenize`;

/**
 * Every question's prompt ids from the server's POST /tokenize: the messages through the served
 * model's chat template (thinking off, as the local path renders them) by default or with `chat`,
 * else the text rendered here. Undefined where the server has no /tokenize (404, 405, not JSON).
 */
async function tokenizeAll(
  base: string,
  o: EvalOptions,
  model: string,
  questions: readonly Question[],
  builder: PromptBuilder,
  logger: EngineLogger,
): Promise<{ ids: Map<string, number[]>; maxModelLen?: number } | undefined> {
  const url = tokenizeUrl(base);
  const viaTemplate = o.chat || o.template === undefined || o.template === 'model';
  const body = (q: Question) =>
    viaTemplate
      ? { model, messages: builder.messages(q.text), add_generation_prompt: true, chat_template_kwargs: { enable_thinking: false } }
      : { model, prompt: builder.text(q.text) };
  const ask = async (q: Question): Promise<{ tokens: number[]; max_model_len?: number } | undefined> => {
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(o.apiKey === undefined ? {} : { authorization: `Bearer ${o.apiKey}` }) },
        body: JSON.stringify(body(q)),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      throw new EvaluationError('server_error', `cannot reach ${url}: ${(err as Error).message}`, q.location, { cause: err });
    }
    const text = await res.text();
    if (res.status === 404 || res.status === 405) return undefined;
    if (!res.ok)
      throw new EvaluationError(
        'server_error',
        `${url} answered HTTP ${res.status}: ${text.replace(/\s+/g, ' ').trim().slice(0, 200)}`,
        q.location,
      );
    try {
      const json = JSON.parse(text) as { tokens?: unknown; max_model_len?: unknown };
      if (!Array.isArray(json.tokens) || !json.tokens.every((t) => Number.isInteger(t))) return undefined;
      return { tokens: json.tokens as number[], ...(typeof json.max_model_len === 'number' ? { max_model_len: json.max_model_len } : {}) };
    } catch {
      return undefined;
    }
  };
  if (questions.length === 0) return undefined;
  const first = await ask(questions[0]!);
  if (first === undefined) {
    logger.warn?.(
      `${url} is not available: prompts use the ${o.template ?? 'plain'} layout and the token budget is estimated from their bytes`,
    );
    return undefined;
  }
  const ids = new Map([[questions[0]!.text, first.tokens]]);
  let next = 1;
  const lane = async () => {
    while (next < questions.length) {
      const q = questions[next++]!;
      const r = await ask(q);
      if (r === undefined) throw new EvaluationError('server_error', `${url} stopped answering token ids`, q.location);
      ids.set(q.text, r.tokens);
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency, questions.length) }, lane));
  return { ids, ...(first.max_model_len === undefined ? {} : { maxModelLen: first.max_model_len }) };
}

/** GET {base}/models: the served ids (and `max_model_len` where the server reports it, as vLLM does). */
async function listModels(base: string, apiKey: string | undefined): Promise<{ id: string; maxModelLen?: number }[]> {
  const url = `${base}/models`;
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      headers: { accept: 'application/json', ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }) },
      signal: AbortSignal.timeout(30_000),
    });
    text = await res.text();
  } catch (err) {
    const e = err as { message?: string; cause?: { code?: string; message?: string } };
    const why = e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
    throw new EvaluationError('server_error', `cannot reach ${url}: ${why}`, {}, { cause: err });
  }
  if (!res.ok)
    throw new EvaluationError('server_error', `${url} answered HTTP ${res.status}: ${text.replace(/\s+/g, ' ').trim().slice(0, 200)}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new EvaluationError(
      'server_error',
      `${url} did not answer JSON: is ${base} an OpenAI-compatible base URL (…/v1)?`,
      {},
      { cause: err },
    );
  }
  const data = (json as { data?: unknown }).data;
  if (!Array.isArray(data)) throw new EvaluationError('server_error', `${url} did not answer a model list ({"data": [...]})`);
  return data.flatMap((m: unknown) => {
    const x = m as { id?: unknown; max_model_len?: unknown };
    if (typeof x.id !== 'string') return [];
    return [typeof x.max_model_len === 'number' ? { id: x.id, maxModelLen: x.max_model_len } : { id: x.id }];
  });
}

export function describePolicy(p: EvalPolicy): string {
  return p.kind === 'model'
    ? `model ${p.dir} (${p.parameters.toLocaleString('en')} parameters, backend ${p.backend}, ${p.template} template)`
    : `${p.model} at ${p.url} (/${p.api === 'chat' ? 'chat/completions' : 'completions'}, ${p.template === 'server' ? "the server's chat template" : p.template === 'model' ? "the model's chat template, rendered by the server's /tokenize" : `${p.template} template`})`;
}
