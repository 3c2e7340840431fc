import { createRequire } from 'node:module';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { CoreError, formatZodIssues, parseConfig, silentLogger, type Logger } from '@rlvr/core';
import { PolicyWorkers, type ApplyChatTemplate, type Qwen3Model, type Tokenizer } from '@rlvr/policy';
import { DecodeQueue } from '../samplers/decode-queue.js';
import { policySampler } from '../samplers/policy-sampler.js';
import { WorkerDecodeExecutor } from '../samplers/worker-decode.js';
import { tokensBytes } from '../spans/locate.js';
import { chat, completions, encodePrompt, STREAMED, type Engine } from './generate.js';
import { declaredTooLarge, errorBody, HttpError, readJson, refuseTooLarge, send } from './http.js';
import { ServerMetrics } from './metrics.js';
import {
  DetokenizeRequestSchema,
  messageText,
  refusedParameter,
  ServeChatRequestSchema,
  ServeCompletionRequestSchema,
  TokenizeRequestSchema,
  withoutNoops,
} from './protocol.js';

export const PolicyServerOptionsSchema = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    /** 0 = a free port the OS picks (read it from `PolicyServer.port`) */
    port: z.number().int().min(0).max(65535).default(8000),
    /** the name clients put in `model` */
    servedModelName: z.string().min(1),
    /** rows (completions) decoded together: concurrent requests share this batch (with workers: per worker) */
    batchSize: z.number().int().min(1).default(16),
    /**
     * policy worker threads that decode (`PolicyWorkers` of `@rlvr/policy`, started with the server
     * and closed by `close()`); default 1: the in-process decode batch, no worker
     */
    workers: z.number().int().min(1).max(256).optional(),
    /** `max_tokens` when a completion request leaves it out (OpenAI's default is 16) */
    defaultMaxTokens: z.number().int().min(1).default(16),
    /** a body over this many bytes is answered 413 */
    maxBodyBytes: z
      .number()
      .int()
      .min(1)
      .default(32 * 1024 * 1024),
    /** completions (prompts x n) one request may ask for */
    maxRowsPerRequest: z.number().int().min(1).default(1024),
    /** when set, `/v1/*` needs `Authorization: Bearer <apiKey>` (vLLM's `--api-key`) */
    apiKey: z.string().min(1).optional(),
  })
  .strict();
export type PolicyServerOptions = z.output<typeof PolicyServerOptionsSchema>;
export type PolicyServerOptionsInput = z.input<typeof PolicyServerOptionsSchema>;

/** What the server generates with. */
export interface ServedPolicy {
  model: Qwen3Model;
  tokenizer: Tokenizer;
  /** the model's chat template; without one, `/v1/chat/completions` needs a `chat_template` */
  applyChatTemplate?: ApplyChatTemplate;
  /**
   * policy workers to decode on instead of starting them (`options.workers`): replicas of `model`'s
   * config, given its weights at the start; the caller closes them after `close()`
   */
  workers?: PolicyWorkers;
}

export interface PolicyServer {
  /** `http://HOST:PORT/v1` */
  url: string;
  host: string;
  port: number;
  /** Stop taking connections, finish the requests in flight, then resolve. */
  close(): Promise<void>;
}

/** The answer to a request after the decode workers failed: the server cannot generate any more. */
const deadMessage = (failure: Error): string => `the decode workers failed, restart rlvr-serve: ${failure.message}`;

const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/**
 * Serve a `@rlvr/policy` model over the OpenAI-compatible protocol as vLLM speaks it, so that
 * clients written for vLLM (the `openai` npm client, `httpSampler`, evaluation harnesses) run
 * against it: `POST /v1/completions` and `/v1/chat/completions` (whole or streamed),
 * `GET /v1/models`, `/v1/models/{id}`, `POST /tokenize`, `/detokenize`, `GET /version`, `/metrics`,
 * `/health`.
 *
 * Continuous batching: the completions of all requests share one running decode batch of
 * `batchSize` rows; a new request's rows join it as soon as there is room (see `DecodeQueue`). A
 * client that disconnects cancels its rows. Bad requests get a 400 naming the parameter (every
 * parameter is implemented or refused, none ignored); a wrong `model` or route a 404; a wrong
 * method a 405; a body over `maxBodyBytes` a 413, sent before the body is read.
 */
export async function startPolicyServer(
  policy: ServedPolicy,
  options: PolicyServerOptionsInput,
  logger: Logger = silentLogger,
): Promise<PolicyServer> {
  const o = parseConfig(PolicyServerOptionsSchema, options, 'server');
  const { model, tokenizer } = policy;
  if (policy.workers !== undefined && o.workers !== undefined && o.workers !== policy.workers.size)
    throw new CoreError('invalid_config', `server: workers is ${o.workers}, but the policy workers given are ${policy.workers.size}`, {
      field: 'workers',
    });
  const sampler = policySampler(model, tokenizer, { batchSize: o.batchSize, name: o.servedModelName });
  // with workers, the rows decode on one executor of a lane per worker (padTokenId: the sampler's default)
  const ownWorkers = policy.workers === undefined && (o.workers ?? 1) > 1;
  const workers = policy.workers ?? (ownWorkers ? await PolicyWorkers.start(model, { workers: o.workers! }) : null);
  if (workers !== null) {
    try {
      workers.publish(model);
    } catch (e) {
      if (ownWorkers) await workers.close();
      throw e;
    }
    logger.info(`decoding on ${workers.size} policy workers, ${o.batchSize} rows each`);
  }
  const executor =
    workers === null ? null : new WorkerDecodeExecutor(workers, model.dims.V, { capacityPerWorker: o.batchSize, padTokenId: 0 });
  const queue: Pick<DecodeQueue, 'submit' | 'stats'> =
    executor === null ? { submit: sampler.decode, stats: sampler.stats } : new DecodeQueue([executor]);
  let closing = false;
  /** the workers' failure, once they cannot decode (not after `close()`) */
  const failure = (): Error | null => (closing ? null : (executor?.failure() ?? null));
  const metrics = new ServerMetrics(o.servedModelName);
  const engine: Engine = {
    model,
    tokenizer,
    sampler: { tokenBytes: sampler.tokenBytes, eosTokenIds: sampler.eosTokenIds, decode: (rows, signal) => queue.submit(rows, signal) },
    applyChatTemplate: policy.applyChatTemplate,
    servedModelName: o.servedModelName,
    defaultMaxTokens: o.defaultMaxTokens,
    maxRowsPerRequest: o.maxRowsPerRequest,
    onFinished: (p, c, reasons) => metrics.finish(p, c, reasons),
  };
  const created = Math.floor(Date.now() / 1000);
  const context = model.config.max_position_embeddings;
  const modelCard = {
    id: o.servedModelName,
    object: 'model',
    created,
    owned_by: 'rlvr',
    root: o.servedModelName,
    parent: null,
    max_model_len: context,
  };
  const inFlight = new Set<Promise<void>>();

  const checkModel = (m: string | null | undefined): void => {
    if (m != null && m !== o.servedModelName) throw new HttpError(404, `The model \`${m}\` does not exist.`, 'model');
  };

  function parse<S extends z.ZodType>(schema: S, body: unknown, endpoint: 'completions' | 'chat' | 'tokenize'): z.output<S> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'the body must be a JSON object');
    let fields = body as Record<string, unknown>;
    if (endpoint !== 'tokenize') {
      const refused = refusedParameter(fields, endpoint);
      if (refused) throw new HttpError(400, refused.message, refused.param);
      fields = withoutNoops(fields);
      if (endpoint === 'chat' && fields.echo === false) delete fields.echo;
    }
    const r = schema.safeParse(fields);
    if (r.success) return r.data;
    const issue = r.error.issues[0]!;
    const unknown = r.error.issues.find((i) => i.code === 'unrecognized_keys');
    if (unknown && 'keys' in unknown) {
      const keys = unknown.keys as string[];
      const at = unknown.path.length > 0 ? `${unknown.path.join('.')}.` : '';
      throw new HttpError(
        400,
        `unknown parameter${keys.length > 1 ? 's' : ''} ${keys.map((k) => at + k).join(', ')} (rlvr-serve refuses what it does not implement; see docs/serve.md)`,
        at + keys[0]!,
      );
    }
    throw new HttpError(400, `invalid request: ${formatZodIssues(r.error.issues, fields)}`, issue.path.join('.') || null);
  }

  const tokenize = (body: unknown): unknown => {
    const r = parse(TokenizeRequestSchema, body, 'tokenize');
    checkModel(r.model);
    let text: string;
    if ('prompt' in r) text = r.prompt;
    else {
      if (!policy.applyChatTemplate) throw new HttpError(400, 'this model has no chat template: tokenize a prompt instead', 'messages');
      const { enable_thinking, ...extra } = r.chat_template_kwargs ?? {};
      text = policy.applyChatTemplate(
        r.messages.map((m) => ({ role: m.role, content: messageText(m.content) })),
        {
          addGenerationPrompt: r.add_generation_prompt ?? true,
          enableThinking: typeof enable_thinking === 'boolean' ? enable_thinking : true,
          ...(Object.keys(extra).length > 0 ? { extra } : {}),
        },
      );
    }
    const tokens = encodePrompt(engine, text, 'prompt' in r ? 'prompt' : 'messages', null);
    const decoder = new TextDecoder();
    const strs = r.return_token_strs === true ? tokens.map((id) => decoder.decode(sampler.tokenBytes.tokenBytes(id))) : null;
    return { count: tokens.length, max_model_len: context, tokens, token_strs: strs };
  };

  const detokenize = (body: unknown): unknown => {
    const r = parse(DetokenizeRequestSchema, body, 'tokenize');
    checkModel(r.model);
    const bad = r.tokens.findIndex((id) => id >= model.dims.V);
    if (bad >= 0)
      throw new HttpError(400, `token id ${r.tokens[bad]} at position ${bad} is not in the vocabulary [0, ${model.dims.V})`, 'tokens');
    return { prompt: new TextDecoder().decode(tokensBytes(r.tokens, sampler.tokenBytes)) };
  };

  interface Route {
    method: 'GET' | 'POST';
    /** a generation route: latency goes to the histogram */
    generates?: boolean;
    run(req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<unknown>;
  }
  const body = (req: IncomingMessage) => readJson(req, o.maxBodyBytes);
  const routes: Record<string, Route> = {
    '/health': {
      method: 'GET',
      run: async () => {
        const f = failure();
        if (f !== null) throw new HttpError(503, deadMessage(f));
      },
    },
    '/version': { method: 'GET', run: async () => ({ version: VERSION }) },
    '/metrics': { method: 'GET', run: async () => metrics.render(queue.stats()) },
    '/v1/models': { method: 'GET', run: async () => ({ object: 'list', data: [modelCard] }) },
    '/tokenize': { method: 'POST', run: async (req) => tokenize(await body(req)) },
    '/detokenize': { method: 'POST', run: async (req) => detokenize(await body(req)) },
    '/v1/completions': {
      method: 'POST',
      generates: true,
      run: async (req, res, signal) => {
        const r = parse(ServeCompletionRequestSchema, await body(req), 'completions');
        checkModel(r.model);
        return completions(engine, r, res, signal);
      },
    },
    '/v1/chat/completions': {
      method: 'POST',
      generates: true,
      run: async (req, res, signal) => {
        const r = parse(ServeChatRequestSchema, await body(req), 'chat');
        checkModel(r.model);
        return chat(engine, r, res, signal);
      },
    },
  };

  const routeOf = (path: string): { name: string; route: Route } | undefined => {
    if (Object.hasOwn(routes, path)) return { name: path, route: routes[path]! };
    if (path.startsWith('/v1/models/')) {
      const id = decodeURIComponent(path.slice('/v1/models/'.length));
      return {
        name: '/v1/models/{id}',
        route: {
          method: 'GET',
          run: async () => {
            if (id !== o.servedModelName) throw new HttpError(404, `The model \`${id}\` does not exist.`, 'model');
            return modelCard;
          },
        },
      };
    }
    return undefined;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const ac = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) ac.abort(new Error('client disconnected'));
    });
    const path = (req.url ?? '/').split('?')[0]!;
    const started = performance.now();
    const found = routeOf(path);
    const name = found?.name ?? 'other';
    const answer = (status: number, payload: unknown): void => {
      send(res, status, payload);
      metrics.response(name, status, found?.route.generates ? (performance.now() - started) / 1000 : undefined);
    };
    try {
      if (!found) throw new HttpError(404, `no route ${path} (routes: ${[...Object.keys(routes), '/v1/models/{id}'].join(', ')})`);
      if (req.method !== found.route.method) throw new HttpError(405, `${path} takes ${found.route.method}, not ${req.method}`);
      if (o.apiKey !== undefined && path.startsWith('/v1/') && req.headers.authorization !== `Bearer ${o.apiKey}`)
        throw new HttpError(401, 'missing or wrong API key (Authorization: Bearer ...)');
      if (req.method === 'POST' && declaredTooLarge(req, o.maxBodyBytes)) {
        refuseTooLarge(req, o.maxBodyBytes);
        metrics.response(name, 413);
        return;
      }
      if (found.route.generates) {
        const f = failure();
        if (f !== null) throw new HttpError(503, deadMessage(f));
      }
      const result = await found.route.run(req, res, ac.signal);
      if (result === STREAMED) {
        metrics.response(name, 200, (performance.now() - started) / 1000);
        logger.info(`${req.method} ${path} 200 (stream)`, { ms: Math.round(performance.now() - started) });
        return;
      }
      answer(200, result);
      logger.info(`${req.method} ${path} 200`, { ms: Math.round(performance.now() - started) });
    } catch (e) {
      if (ac.signal.aborted) {
        metrics.response(name, 499);
        return void logger.info(`${req.method} ${path}: client disconnected, request cancelled`);
      }
      // a request the decode workers failed under: 503 with their error, as every later one gets
      const dead = e instanceof HttpError ? null : failure();
      const err =
        e instanceof HttpError
          ? e
          : dead !== null
            ? new HttpError(503, deadMessage(e as Error))
            : new HttpError(500, `internal error: ${(e as Error).message}`);
      if (err.status >= 500) logger.warn(`${req.method} ${path} ${err.status}: ${err.message}`);
      if (err.status === 413) {
        refuseTooLarge(req, o.maxBodyBytes);
        metrics.response(name, 413);
        return;
      }
      answer(err.status, errorBody(err));
    }
  }

  const server = createServer((req, res) => {
    const done = handle(req, res).finally(() => inFlight.delete(done));
    inFlight.add(done);
  });
  // Idle keep-alive connections stay open longer than clients keep them (undici: 4 s), so that the
  // client always closes first: a server closing one as the client reuses it is a reset POST.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  // `Expect: 100-continue`: a body declared too large is refused before the client sends it
  server.on('checkContinue', (req, res) => {
    if (declaredTooLarge(req, o.maxBodyBytes)) {
      send(res, 413, errorBody(new HttpError(413, `the body is larger than ${o.maxBodyBytes} bytes`)), { connection: 'close' });
      metrics.response(routeOf((req.url ?? '/').split('?')[0]!)?.name ?? 'other', 413);
      return;
    }
    res.writeContinue();
    server.emit('request', req, res);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (e: unknown) => {
    if (ownWorkers) await workers!.close();
    throw e;
  });
  const port = (server.address() as AddressInfo).port;
  const hostInUrl = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${hostInUrl}:${port}/v1`,
    host: o.host,
    port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await Promise.allSettled([...inFlight]);
      server.closeAllConnections();
      await closed;
      closing = true;
      if (ownWorkers) await workers!.close();
    },
  };
}
