import { createRequire } from 'node:module';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { CoreError, drainAndClose, parseConfig, silentLogger, type Logger } from '@rlvr/core';
import { PolicyWorkers, type ApplyChatTemplate, type Qwen3Model, type Tokenizer } from '@rlvr/policy';
import { DecodeQueue } from '../samplers/decode-queue.js';
import { policySampler } from '../samplers/policy-sampler.js';
import { WorkerDecodeExecutor } from '../samplers/worker-decode.js';
import { chat, completions, STREAMED, type Engine } from './generate.js';
import { declaredTooLarge, echoName, errorBody, HttpError, JsonText, parseBody, readBody, refuseTooLarge, send } from './http.js';
import { ServerMetrics } from './metrics.js';
import { bringsTemplate, prepareRequest, type TextEngine, type TextRoute } from './requests.js';
import { TextThread, type ThreadPrepared } from './text-thread.js';

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
    /**
     * a body up to this many bytes is parsed, templated and tokenized in the server's thread (at most
     * a few ms); a larger one in the text thread (with `policy.source`), so that it never blocks the
     * server: 0 sends every body there
     */
    inlineBodyBytes: z
      .number()
      .int()
      .min(0)
      .default(64 * 1024),
    /** the text thread's limit for one body (a chat template that loops): a 400, and a fresh thread */
    textTimeoutMs: z.number().int().min(1).default(60_000),
    /** a connection that has not sent its request's headers this long after it began is cut off with a 408 (slowloris) */
    headersTimeoutMs: z.number().int().min(1).default(20_000),
    /** ... and one that has not sent its whole request (headers and body) this long after it began */
    requestTimeoutMs: z.number().int().min(1).default(120_000),
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
  /**
   * where the text thread loads the tokenizer and chat template from (`tokenizer`: a spec for
   * `loadTokenizer`, default the directory's; the template is `modelChatTemplate(dir)`'s, which should
   * be `applyChatTemplate`). Without it, no text thread: every body is handled in the server's thread,
   * and a big one blocks it while it is tokenized.
   */
  source?: { dir: string; tokenizer?: string };
}

export interface PolicyServer {
  /** `http://HOST:PORT/v1` */
  url: string;
  host: string;
  port: number;
  /**
   * Answer every new request 503 (`Connection: close`), finish the requests in flight with the listener open (so
   * that connections in the kernel's accept queue get that 503, not a reset: core's `drainAndClose`), stop
   * listening, then resolve.
   */
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
 * method a 405; a body over `maxBodyBytes` a 413, sent before the body is read; a body nested
 * deeper than 64 levels a 400. Bodies over `inlineBodyBytes`, and chat templates requests bring, are
 * parsed, rendered and tokenized in a text thread, so that no request blocks the server's thread.
 * After `close()` begins, every response says `Connection: close` and every new request gets a 503.
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
      await workers.publish(model);
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
    servedModelName: o.servedModelName,
    onFinished: (p, c, reasons) => metrics.finish(p, c, reasons),
  };
  const context = model.config.max_position_embeddings;
  const limits = {
    servedModelName: o.servedModelName,
    context,
    vocab: model.dims.V,
    defaultMaxTokens: o.defaultMaxTokens,
    maxRowsPerRequest: o.maxRowsPerRequest,
  };
  const text: TextEngine = { ...limits, tokenizer, tokenBytes: sampler.tokenBytes, applyChatTemplate: policy.applyChatTemplate };
  let thread: TextThread | null = null;
  if (policy.source !== undefined) {
    try {
      thread = await TextThread.start({ ...policy.source, limits }, { timeoutMs: o.textTimeoutMs });
    } catch (e) {
      if (ownWorkers) await workers!.close();
      throw e;
    }
  }
  /** set once `close()` began: every response then closes its connection, so that no client reuses it */
  let draining = false;
  const created = Math.floor(Date.now() / 1000);
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
  const openResponses = new Set<ServerResponse>();

  interface Route {
    method: 'GET' | 'POST';
    /** a generation route: latency goes to the histogram */
    generates?: boolean;
    run(req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<unknown>;
  }
  /** The text side of a request (`requests.ts`): in this thread for a small body, else in the text thread. */
  const prepare = async (route: TextRoute, req: IncomingMessage): Promise<ThreadPrepared> => {
    const bytes = await readBody(req, o.maxBodyBytes);
    if (thread !== null && bytes.length > o.inlineBodyBytes) return thread.run(route, bytes);
    const body = parseBody(bytes);
    if (thread !== null && bringsTemplate(route, body)) return thread.run(route, bytes);
    return prepareRequest(text, route, body);
  };
  const answerText = async (route: TextRoute, req: IncomingMessage): Promise<unknown> => {
    const p = await prepare(route, req);
    if (p.kind !== 'answer') throw new Error(`${route} prepared as ${p.kind}`);
    return new JsonText(p.json);
  };
  const routes: Record<string, Route> = {
    '/health': {
      method: 'GET',
      run: async () => {
        const f = failure();
        if (f !== null) throw new HttpError(503, deadMessage(f));
      },
    },
    '/version': { method: 'GET', run: async () => ({ version: VERSION }) },
    '/metrics': { method: 'GET', run: async () => metrics.render(queue.stats(), thread?.pending ?? 0) },
    '/v1/models': { method: 'GET', run: async () => ({ object: 'list', data: [modelCard] }) },
    '/tokenize': { method: 'POST', run: (req) => answerText('/tokenize', req) },
    '/detokenize': { method: 'POST', run: (req) => answerText('/detokenize', req) },
    '/v1/completions': {
      method: 'POST',
      generates: true,
      run: async (req, res, signal) => {
        const p = await prepare('/v1/completions', req);
        if (p.kind !== 'completions') throw new Error(`/v1/completions prepared as ${p.kind}`);
        signal.throwIfAborted();
        return completions(engine, p, res, signal);
      },
    },
    '/v1/chat/completions': {
      method: 'POST',
      generates: true,
      run: async (req, res, signal) => {
        const p = await prepare('/v1/chat/completions', req);
        if (p.kind !== 'chat') throw new Error(`/v1/chat/completions prepared as ${p.kind}`);
        signal.throwIfAborted();
        return chat(engine, p, res, signal);
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
            if (id !== o.servedModelName) throw new HttpError(404, `The model \`${echoName(id)}\` does not exist.`, 'model');
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
    if (draining) res.setHeader('connection', 'close');
    const path = (req.url ?? '/').split('?')[0]!;
    const started = performance.now();
    const found = routeOf(path);
    const name = found?.name ?? 'other';
    const answer = (status: number, payload: unknown): void => {
      send(res, status, payload);
      metrics.response(name, status, found?.route.generates ? (performance.now() - started) / 1000 : undefined);
    };
    try {
      // from `close()` on, a new request is refused at once (its client retries elsewhere), so the drain ends
      if (draining) throw new HttpError(503, 'the server is shutting down; send this request to another replica');
      if (!found)
        throw new HttpError(404, `no route ${echoName(path)} (routes: ${[...Object.keys(routes), '/v1/models/{id}'].join(', ')})`);
      if (req.method !== found.route.method)
        throw new HttpError(405, `${path} takes ${found.route.method}, not ${echoName(req.method ?? '')}`);
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
      if (err.status >= 500 && !(draining && err.status === 503)) logger.warn(`${req.method} ${path} ${err.status}: ${err.message}`);
      if (err.status === 413) {
        refuseTooLarge(req, o.maxBodyBytes);
        metrics.response(name, 413);
        return;
      }
      answer(err.status, errorBody(err));
    }
  }

  // slowloris: a request still sending its headers (or its body) after these is answered 408 and cut off;
  // Node checks every `connectionsCheckingInterval` ms
  const server = createServer({ connectionsCheckingInterval: Math.min(1000, o.headersTimeoutMs) }, (req, res) => {
    openResponses.add(res);
    const done = handle(req, res).finally(() => {
      inFlight.delete(done);
      openResponses.delete(res);
    });
    inFlight.add(done);
  });
  // Idle keep-alive connections stay open longer than clients keep them (undici: 4 s), so that the
  // client always closes first: a server closing one as the client reuses it is a reset POST.
  server.keepAliveTimeout = 65_000;
  // counted from the first byte of each request, not from the idle wait before it
  server.headersTimeout = Math.min(o.headersTimeoutMs, o.requestTimeoutMs);
  server.requestTimeout = o.requestTimeoutMs;
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
    await thread?.close();
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
      draining = true;
      // the responses already begun but not yet sent close their connections too
      // (a stream whose headers went out ends its connection once it is done)
      for (const res of openResponses) {
        if (!res.headersSent) res.setHeader('connection', 'close');
        else res.once('finish', () => res.socket?.end());
      }
      // the listener stays open until the requests in flight are done and the kernel's accept queue is empty:
      // a connection waiting there gets its 503, where closing the listener first reset it
      await drainAndClose(server, {
        busy: () => inFlight.size,
        idle: async () => void (await Promise.allSettled([...inFlight])),
      });
      closing = true;
      await thread?.close();
      if (ownWorkers) await workers!.close();
    },
  };
}
