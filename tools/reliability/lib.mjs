// Shared pieces of the reliability probes: loopback HTTP with timings, percentiles, a bin started as a child.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One HTTP request on loopback: {status, body, ms}, or {error, ms} when the connection fails. */
export function send(url, { method = 'POST', body, headers = {}, timeoutMs = 120_000 } = {}) {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method,
        headers:
          body === undefined ? headers : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }));
        res.on('error', (e) => resolve({ error: e.code ?? e.message, ms: performance.now() - t0 }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ error: e.code ?? e.message, ms: performance.now() - t0 }));
    req.end(body);
  });
}

/** The q-quantile (0..1) of numbers, nearest rank. */
export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

/**
 * `clients` loops, each sending `perClient` requests made by `make(i)` (i global), checking each answer with
 * `check(i, answer)` (true = right). Returns the load figures.
 */
export async function load(url, { clients, perClient, make, check }) {
  const latencies = [];
  let lost = 0;
  let mismatched = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let k = 0; k < perClient; k++) {
        const i = c * perClient + k;
        const answer = await send(url, { body: make(i) });
        if (answer.error !== undefined || answer.status !== 200) lost++;
        else if (!check(i, answer)) mismatched++;
        else latencies.push(answer.ms);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return {
    requests: clients * perClient,
    clients,
    lost,
    mismatched,
    p50Ms: round(quantile(latencies, 0.5)),
    p99Ms: round(quantile(latencies, 0.99)),
    perSecond: round((clients * perClient) / seconds),
  };
}

export const round = (x, digits = 1) => Number(x.toFixed(digits));

/** Starts a bin (`node FILE args`) and waits until its stdout matches `ready`; returns {child, match, output()}. */
export function startBin(file, args, ready, { timeoutMs = 120_000 } = {}) {
  const child = spawn(process.execPath, [file, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (err += c));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not start in ${timeoutMs} ms:\n${out}${err}`)), timeoutMs);
    const poll = setInterval(() => {
      const m = ready.exec(out);
      if (m) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve({ child, match: m, exited, output: () => ({ stdout: out, stderr: err }) });
      }
    }, 20);
    child.on('exit', () => {
      if (ready.exec(out)) return;
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`${file} exited before it was ready:\n${out}${err}`));
    });
  });
}

/**
 * `count` raw connections that send a POST's headers (a 100-byte body declared) and one byte of body, then stall.
 * Returns {sent, settled()}: settled() resolves, once every connection has closed or `waitMs` has passed, with how
 * many were answered 408 and closed, and how many were still open (then destroyed).
 */
export function stalledBodies(url, path, count, waitMs) {
  const u = new URL(url);
  const t0 = performance.now();
  let written = 0;
  let allWritten;
  const sent = new Promise((r) => (allWritten = r));
  const conns = Array.from({ length: count }, () => {
    const c = connect(Number(u.port), u.hostname);
    const s = { c, got: '', closedMs: null };
    c.on('data', (d) => (s.got += d.toString('latin1')));
    c.on('error', () => {});
    c.on('close', () => (s.closedMs = performance.now() - t0));
    c.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`, () => {
      if (++written === count) allWritten();
    });
    return s;
  });
  return {
    /** resolves once every connection has written its headers and byte */
    sent,
    async settled() {
      while (conns.some((s) => s.closedMs === null) && performance.now() - t0 < waitMs) await new Promise((r) => setTimeout(r, 100));
      const closed = conns.filter((s) => s.closedMs !== null);
      for (const s of conns) s.c.destroy();
      return {
        stalled: count,
        answered408: closed.filter((s) => /^HTTP\/1\.1 408 /.test(s.got)).length,
        stillOpen: count - closed.length,
        lastClosedSeconds: closed.length ? round(Math.max(...closed.map((s) => s.closedMs)) / 1000) : null,
      };
    },
  };
}

/** `n` GET /health 10 ms apart: how many were 200, and the statuses seen. */
export async function healthProbes(url, n) {
  const statuses = [];
  for (let i = 0; i < n; i++) {
    const h = await send(`${url}/health`, { method: 'GET' });
    statuses.push(h.status ?? h.error);
    await new Promise((r) => setTimeout(r, 10));
  }
  return {
    healthAnswers: n,
    health200: statuses.filter((s) => s === 200).length,
    healthOther: [...new Set(statuses.filter((s) => s !== 200))],
  };
}

/**
 * SIGTERM while `count` requests wait in the kernel's accept queue: the bin is stopped (SIGSTOP), `count` clients
 * connect and send `make(i)` to `url` on fresh connections, then SIGTERM and SIGCONT. Each must get an answer (200 or
 * 503), none a reset. Returns the counts and the exit code.
 */
export async function sigtermAcceptQueue(started, url, count, make) {
  started.child.kill('SIGSTOP');
  let sent = 0;
  let allSent;
  const whenSent = new Promise((r) => (allSent = r));
  const answers = Array.from({ length: count }, (_, i) => {
    const body = make(i);
    return new Promise((resolve) => {
      const req = request(
        url,
        { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode }));
          res.on('error', (e) => resolve({ error: e.code ?? e.message }));
        },
      );
      req.on('error', (e) => resolve({ error: e.code ?? e.message }));
      req.end(body, () => {
        if (++sent === count) allSent();
      });
    });
  });
  await whenSent;
  started.child.kill('SIGTERM');
  started.child.kill('SIGCONT');
  const got = await Promise.all(answers);
  const exit = await started.exited;
  return {
    requests: count,
    answered200: got.filter((a) => a.status === 200).length,
    answered503: got.filter((a) => a.status === 503).length,
    failed: got.filter((a) => a.status !== 200 && a.status !== 503).length,
    failures: [...new Set(got.filter((a) => a.status !== 200 && a.status !== 503).map((a) => a.error ?? a.status))],
    exitCode: exit.code,
  };
}
