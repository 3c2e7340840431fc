/**
 * The HTTP server: routes, the size-limited body reader, error answers and graceful shutdown around one
 * `VerifierPool`. Stateless between requests, so scaling out is starting more replicas and listing their URLs.
 *
 * Routes: `POST /get_reward` (OpenRLHF remote reward model), `POST /advantages` (interop rows -> per-token
 * advantages), `GET /health`. Every answer is JSON; every refusal is `{"error": {"code", "message", ...}}` with a
 * 4xx status, and a failure inside the server is a 500 with the same shape: no request can bring the process down.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { drainAndClose, silentLogger, type Logger } from '@rlvr/core';
import { VerifierPool } from '@rlvr/math-verify';
import { AdvantagesPool } from './advantages-pool.js';
import { ClientGone, parseJson, readBody } from './body.js';
import { RewardServerError, preview } from './errors.js';
import { gradeRequest, parseGetRewardRequest } from './get-reward.js';
import { type RewardServerOptions, type RewardServerOptionsInput, resolveServerOptions } from './options.js';

/** Counters since start (also in `GET /health`). */
export interface RewardServerStats {
  /** requests received, all routes */
  requests: number;
  /** requests being handled now, once their body has arrived (at most `maxInFlight`) */
  inFlight: number;
  /** request bodies being received now (at most `maxReceiving`) */
  receiving: number;
  /** requests answered 408 because their body did not arrive within `bodyTimeoutMs` */
  bodyTimeouts: number;
  /** completions graded by `/get_reward` */
  answers: number;
  /** of those, how many ran past the timeout */
  timeouts: number;
  /** 4xx answers */
  clientErrors: number;
  /** 5xx answers (other than 503 while draining or overloaded) */
  serverErrors: number;
  /** requests whose client went away before the answer */
  clientsGone: number;
  /** requests refused with 503 because `maxInFlight` were being handled or `maxReceiving` bodies received */
  overloaded: number;
}

const ROUTES = 'POST /get_reward, POST /advantages, GET /health';

export class RewardServer {
  readonly options: RewardServerOptions;
  private readonly server: Server;
  private readonly pool: VerifierPool;
  private readonly advantages: AdvantagesPool;
  private readonly log: Logger;
  private readonly startedAt = Date.now();
  private draining = false;
  private closing: Promise<void> | null = null;
  private idleWaiters: (() => void)[] = [];
  /** Handlers running, whatever their stage (a body being received, grading, a 413's discarded rest): shutdown waits for them. */
  private active = 0;
  private readonly counters: RewardServerStats = {
    requests: 0,
    inFlight: 0,
    receiving: 0,
    bodyTimeouts: 0,
    answers: 0,
    timeouts: 0,
    clientErrors: 0,
    serverErrors: 0,
    clientsGone: 0,
    overloaded: 0,
  };

  private constructor(options: RewardServerOptions, log: Logger) {
    this.options = options;
    this.log = log;
    this.pool = new VerifierPool({
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      timeoutMs: options.timeoutMs,
      workerMemoryMb: options.workerMemoryMb,
      verify: options.verify,
    });
    this.advantages = new AdvantagesPool({
      workers: options.advantageWorkers,
      workerMemoryMb: options.workerMemoryMb,
      limits: { maxAdvantageTokens: options.maxAdvantageTokens, maxRowTokens: options.maxRowTokens },
    });
    this.server = createServer((req, res) => this.onRequest(req, res));
    // `Expect: 100-continue` (curl sends it for large bodies): refuse an oversized body before it is sent.
    this.server.on('checkContinue', (req, res) => {
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > this.options.maxBodyBytes) {
        this.counters.requests++;
        const err = new RewardServerError(
          'body_too_large',
          `request body is ${declared} bytes, more than the limit of ${this.options.maxBodyBytes} bytes (server option maxBodyBytes, CLI --max-body-bytes)`,
        );
        this.sendJson(res, err.status, JSON.stringify(err.toJSON()), true);
        this.counters.clientErrors++;
        return;
      }
      res.writeContinue();
      this.onRequest(req, res);
    });
    // A request line or header the parser rejects: answer 400 if the socket still can, never throw.
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
      if (err.code === 'ECONNRESET' || !socket.writable) {
        socket.destroy();
        return;
      }
      const body = JSON.stringify(new RewardServerError('invalid_request', `malformed HTTP request: ${err.message}`).toJSON());
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
  }

  /**
   * Validates the options, starts the verifier workers and listens. Throws `RewardServerError` with
   * `invalid_options` (naming each bad field) or `listen_failed` (port taken, address not available).
   */
  static async start(options: RewardServerOptionsInput = {}, log: Logger = silentLogger): Promise<RewardServer> {
    const s = new RewardServer(resolveServerOptions(options), log);
    try {
      await new Promise<void>((resolve, reject) => {
        s.server.once('error', reject);
        s.server.listen(s.options.port, s.options.host, () => {
          s.server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      await Promise.all([s.pool.close(), s.advantages.close()]);
      throw new RewardServerError(
        'listen_failed',
        `cannot listen on ${s.options.host}:${s.options.port}: ${(err as Error).message}`,
        {},
        { cause: err },
      );
    }
    return s;
  }

  /** The port actually bound (useful with `port: 0`). */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `http://host:port` (IPv6 hosts in brackets). */
  get url(): string {
    const a = this.server.address() as AddressInfo;
    return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  }

  get stats(): RewardServerStats {
    return { ...this.counters };
  }

  /** Worker threads of the verifier pool. */
  get concurrency(): number {
    return this.pool.concurrency;
  }

  /** Worker threads of `/advantages`. */
  get advantageWorkers(): number {
    return this.advantages.workers;
  }

  /**
   * Graceful shutdown: answer every new request with 503 `shutting_down` (and `/health` with 503 `draining`), let
   * the requests in flight finish (at most `shutdownTimeoutMs`, then their connections are cut) while the listener
   * stays open (the connections in the kernel's accept queue get their 503, not a reset), then stop listening, close
   * the connections and stop the workers. Idempotent: a second call returns the same promise.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.draining = true;
    // Every request from now on gets a 503 (`/health` too: `draining`), and the listener stays open until the
    // requests in flight are done and the accept queue is empty (core's `drainAndClose`): a client whose connection
    // arrives meanwhile, or waits in the kernel's accept queue (which closing the listener would reset), gets a 503
    // `shutting_down` it can retry elsewhere, never a reset.
    const { timedOut, cut } = await drainAndClose(this.server, {
      busy: () => this.active,
      idle: () => new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
      timeoutMs: this.options.shutdownTimeoutMs,
    });
    if (timedOut)
      this.log.warn(`shutdown: ${cut} request(s) still in flight after ${this.options.shutdownTimeoutMs} ms; their connections were cut`);
    await Promise.all([this.pool.close(), this.advantages.close()]);
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    this.counters.requests++;
    // Errors on a dead socket surface here and in the handler's catch; they must not become unhandled events.
    req.on('error', () => {});
    res.on('error', () => {});
    this.active++;
    // aborted when the client goes away before its answer: its grading or estimation is cancelled
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort(new ClientGone('the client closed the connection before its answer'));
    });
    this.route(req, res, gone.signal)
      .catch((err: unknown) => this.fail(req, res, err, gone.signal))
      .catch((err: unknown) => this.log.warn(`while answering an error: ${String(err)}`))
      .finally(() => {
        this.active--;
        if (this.active === 0) for (const w of this.idleWaiters.splice(0)) w();
      });
  }

  /** 503 `overloaded` when a request cannot take a slot: `maxInFlight` handled, or `maxReceiving` bodies received. */
  private refuseIfOverloaded(receiving: boolean): void {
    const { inFlight, receiving: bodies } = this.counters;
    if (inFlight >= this.options.maxInFlight)
      throw new RewardServerError(
        'overloaded',
        `${inFlight} requests are in flight (the limit, maxInFlight / --max-in-flight); retry shortly or send it to another replica`,
      );
    if (receiving && bodies >= this.options.maxReceiving)
      throw new RewardServerError(
        'overloaded',
        `${bodies} request bodies are being received (the limit, maxReceiving / --max-receiving); retry shortly or send it to another replica`,
      );
  }

  /**
   * The body of a POST, within `maxBodyBytes` and `bodyTimeoutMs`. It holds a `maxReceiving` slot while it arrives,
   * and no `maxInFlight` slot: a client that stalls its body keeps nobody else from being graded.
   */
  private async receive(req: IncomingMessage): Promise<Buffer> {
    this.refuseIfOverloaded(true);
    this.counters.receiving++;
    try {
      return await readBody(req, this.options.maxBodyBytes, this.options.bodyTimeoutMs);
    } finally {
      this.counters.receiving--;
    }
  }

  /** Runs `work` in one of the `maxInFlight` slots (503 `overloaded` when none is free). */
  private async inFlight<T>(work: () => Promise<T>): Promise<T> {
    this.refuseIfOverloaded(false);
    this.counters.inFlight++;
    try {
      return await work();
    } finally {
      this.counters.inFlight--;
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch (err) {
      throw new RewardServerError('invalid_request', `the request target ${preview(req.url)} is not a valid URL path`, {}, { cause: err });
    }
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const allow = (method: string) => {
      if (req.method !== method && !(method === 'GET' && req.method === 'HEAD')) {
        res.setHeader('Allow', method === 'GET' ? 'GET, HEAD' : method);
        throw new RewardServerError('method_not_allowed', `${req.method} ${path}: this route takes ${method}`);
      }
    };
    if (path === '/health') {
      allow('GET');
      const body = {
        status: this.draining ? 'draining' : 'ok',
        uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000),
        concurrency: this.pool.concurrency,
        timeoutMs: this.options.timeoutMs,
        maxBodyBytes: this.options.maxBodyBytes,
        bodyTimeoutMs: this.options.bodyTimeoutMs,
        maxInFlight: this.options.maxInFlight,
        maxReceiving: this.options.maxReceiving,
        advantageWorkers: this.advantages.workers,
        maxAdvantageTokens: this.options.maxAdvantageTokens,
        maxRowTokens: this.options.maxRowTokens,
        stats: this.stats,
        pool: this.pool.stats,
      };
      this.sendJson(res, this.draining ? 503 : 200, JSON.stringify(body));
      return;
    }
    if (path !== '/get_reward' && path !== '/advantages')
      throw new RewardServerError('not_found', `no route ${req.method} ${path}; routes: ${ROUTES}`);
    allow('POST');
    if (this.draining) throw new RewardServerError('shutting_down', 'the server is shutting down; send this request to another replica');
    // refused at once when every in-flight slot is taken: the body is not read
    this.refuseIfOverloaded(false);
    const body = await this.receive(req);
    await this.inFlight(async () => {
      if (path === '/get_reward') {
        const request = parseGetRewardRequest(parseJson(body.toString('utf8'), 'POST /get_reward'));
        const details = url.searchParams.has('details') && url.searchParams.get('details') !== '0';
        const out = await gradeRequest(request, this.pool, this.options, details, signal);
        this.counters.answers += out.rewards.length;
        for (const t of out.extra_logs.timeout) this.counters.timeouts += t;
        this.sendJson(res, 200, JSON.stringify(out));
      } else {
        // parsed, estimated and written in a worker thread: this loop only moves the bytes
        const answer = await this.advantages.run(body, url.search.slice(1), signal);
        if (answer.internal)
          this.log.warn(`${req.method} ${req.url}: ${answer.internal.message}${answer.internal.stack ? `\n${answer.internal.stack}` : ''}`);
        this.count(answer.status);
        this.send(res, answer.status, answer.body);
      }
    });
  }

  private count(status: number): void {
    if (status >= 500) this.counters.serverErrors++;
    else if (status >= 400) this.counters.clientErrors++;
  }

  private sendJson(res: ServerResponse, status: number, body: string, close = false): void {
    this.send(res, status, body, close);
  }

  /** Writes a JSON answer: headers and `body` (text or UTF-8 bytes), then ends it. */
  private send(res: ServerResponse, status: number, body: string | Uint8Array, close = false): void {
    if (res.destroyed) {
      this.counters.clientsGone++; // it left while its request was handled; the answer is dropped
      return;
    }
    if (res.headersSent) return;
    this.head(res, status, body, close);
    res.end(body);
  }

  private head(res: ServerResponse, status: number, body: string | Uint8Array, close: boolean): void {
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
    if (close || this.draining) res.setHeader('Connection', 'close');
  }

  /** Answers a failed request (an oversized body: see `refuseBody`). */
  private async fail(req: IncomingMessage, res: ServerResponse, err: unknown, signal: AbortSignal): Promise<void> {
    if (err instanceof ClientGone || signal.aborted || res.destroyed) {
      this.counters.clientsGone++;
      return;
    }
    let e: RewardServerError;
    if (err instanceof RewardServerError) e = err;
    else {
      e = new RewardServerError('internal', `${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`, {}, { cause: err });
      this.log.warn(`${req.method} ${req.url}: ${e.message}${err instanceof Error && err.stack ? `\n${err.stack}` : ''}`);
    }
    if (e.code === 'worker_failed') this.log.warn(`${req.method} ${req.url}: ${e.message}`);
    if (e.code === 'overloaded') {
      this.counters.overloaded++;
      if (!res.headersSent) res.setHeader('Retry-After', '1');
    } else if (e.code !== 'shutting_down') this.count(e.status);
    if (e.code === 'body_timeout') this.counters.bodyTimeouts++;
    if (e.code === 'body_too_large') await this.refuseBody(req, res, e);
    // a body refused unread (overloaded), or one that stalled: the connection closes after the answer
    else this.sendJson(res, e.status, JSON.stringify(e.toJSON()), e.code === 'overloaded' || e.code === 'body_timeout');
  }

  /**
   * The 413 goes out at once, headers and body (a client that reads while it sends stops sending), and the
   * connection stays open while the rest of the body is read and dropped (see `discardRest`): a client that
   * sends its whole body before it reads (Python's `urllib`) then finds the 413 waiting instead of a reset
   * connection. Then the connection is closed.
   */
  private async refuseBody(req: IncomingMessage, res: ServerResponse, e: RewardServerError): Promise<void> {
    if (res.destroyed || res.headersSent) return;
    const body = JSON.stringify(e.toJSON());
    this.head(res, e.status, body, true);
    res.write(body);
    if (!req.complete) await this.discardRest(req);
    if (!res.destroyed) res.end();
  }

  /**
   * Reads and drops the rest of a refused body; resolves at its end, when the client goes, once it has dropped
   * `maxBodyBytes + maxDiscardBytes` (so a body of up to that size is read to its end, whether it was refused from
   * its `Content-Length` before a byte was read or past the limit while reading), or after `bodyTimeoutMs` (a
   * client that stalls).
   */
  private discardRest(req: IncomingMessage): Promise<void> {
    const budget = this.options.maxBodyBytes + this.options.maxDiscardBytes;
    return new Promise((resolve) => {
      let dropped = 0;
      const timer = setTimeout(() => done(), this.options.bodyTimeoutMs);
      const done = () => {
        clearTimeout(timer);
        req.off('data', onData);
        req.off('end', done);
        req.off('close', done);
        resolve();
      };
      const onData = (chunk: Buffer) => {
        dropped += chunk.length;
        if (dropped > budget) {
          req.pause();
          done();
        }
      };
      req.on('data', onData);
      req.on('end', done);
      req.on('close', done);
      req.resume();
    });
  }
}

/** `RewardServer.start(options, log)`. */
export function startRewardServer(options: RewardServerOptionsInput = {}, log?: Logger): Promise<RewardServer> {
  return RewardServer.start(options, log);
}
