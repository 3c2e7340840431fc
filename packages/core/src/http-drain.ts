/**
 * The one graceful close of rlvr's HTTP servers (`rlvr-reward-server`, `rlvr-serve`): drain with the listener open,
 * then close it. Closing the listener first resets every connection that waits in the kernel's accept queue (the
 * kernel accepted it, the server's thread has not yet): under load that was a quarter of the requests sent just before
 * SIGTERM, which got ECONNRESET instead of an answer a client can act on.
 */

/**
 * What `drainAndClose` needs of a `node:http` `Server`. Structural, so that core's public types need no Node types.
 */
export interface DrainableServer {
  on(event: 'connection', listener: () => void): unknown;
  off(event: 'connection', listener: () => void): unknown;
  close(callback?: (err?: Error) => void): unknown;
  closeIdleConnections(): void;
  closeAllConnections(): void;
}

export interface DrainWork {
  /** Requests the server is handling now (bodies being received included). */
  busy(): number;
  /** Resolves once `busy()` may have reached 0 (it is read again after). */
  idle(): Promise<void>;
  /** How long the drain may take before the connections still busy are cut (ms); absent: no limit. */
  timeoutMs?: number;
}

/** How a drain ended. */
export interface DrainResult {
  /** `timeoutMs` ran out and the connections still open were cut. */
  timedOut: boolean;
  /** The requests still busy then (0 when only connections without a request, such as half-sent headers, were cut). */
  cut: number;
}

/** Turns of the event loop with no new connection that end the drain: at least two I/O phases (accept, then read). */
const QUIET_TURNS = 3;

/**
 * Drains `server` and stops it. The caller's request handler must already answer every request that arrives from now
 * on with a quick refusal (a 503 with `Connection: close`), so that the drain ends under any load.
 *
 * While the requests in flight finish, the listener stays open: connections that arrive meanwhile, or wait in the
 * accept queue, are let in and their requests answered (the 503), never reset. Once nothing is in flight, turns of the
 * event loop let in what the kernel accepted while the thread was busy, until a span of turns brings no new connection
 * and nothing is in flight. Then the listener closes, idle keep-alive connections are closed, and this resolves once
 * every connection has ended. Past `timeoutMs` the connections still open are cut.
 */
export async function drainAndClose(server: DrainableServer, work: DrainWork): Promise<DrainResult> {
  let accepted = 0;
  const onConnection = (): void => {
    accepted++;
  };
  server.on('connection', onConnection);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline =
    work.timeoutMs === undefined || !Number.isFinite(work.timeoutMs)
      ? new Promise<'timeout'>(() => {})
      : new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), work.timeoutMs);
        });
  const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  let timedOut = false;
  let cut = 0;
  try {
    for (let seen = -1; ; ) {
      const idle = work.busy() === 0 ? Promise.resolve() : work.idle();
      if ((await Promise.race([idle, deadline])) === 'timeout') {
        timedOut = true;
        cut = work.busy();
        break;
      }
      for (let k = 0; k < QUIET_TURNS; k++) await turn();
      if (accepted === seen && work.busy() === 0) break;
      seen = accepted;
    }
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    // a connection that is neither idle nor busy (a client still sending its headers) ends at its headers timeout
    if (!timedOut && (await Promise.race([closed, deadline])) === 'timeout') {
      timedOut = true;
      cut = work.busy();
    }
    if (timedOut) server.closeAllConnections();
    await closed;
    return { timedOut, cut };
  } finally {
    clearTimeout(timer);
    server.off('connection', onConnection);
  }
}
