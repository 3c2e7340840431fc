// Shared pieces of the reliability probes: loopback HTTP with timings, percentiles, a bin started as a child.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
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
