// Probes of rlvr-serve (the bin, on loopback, serving the embedded warmup model): hostile bodies, a client leaving
// mid-stream, /health while big /tokenize bodies are read (in the text thread, and all in the server's thread as
// before it), 64 slowloris connections under 16 clients, 256 stalled bodies, SIGTERM with 32 requests in flight and
// with 32 in the accept queue, keep-alive after SIGTERM.
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { healthProbes, load, quantile, ROOT, round, send, sigtermAcceptQueue, stalledBodies, startBin } from '../lib.mjs';

const BIN = join(ROOT, 'packages/rollout/bin/rlvr-serve.js');
const MODEL = join(ROOT, 'packages/reference-trainer/assets/warmup');
const MiB = 1024 * 1024;
/** The tokenizer's limit (`MAX_ENCODE_CHARS` of `@rlvr/policy`): a longer text is a 400 before any encoding. */
const MAX_ENCODE_CHARS = 2 ** 24;

/**
 * The /tokenize bodies whose reading /health is probed during: [label, prompt characters, expected status]. A 32 MiB
 * body fits `--max-body-bytes` but its prompt is over the tokenizer's limit: read and parsed, then a 400 naming it.
 */
const TOKENIZE_CASES = [
  ['10MB', 10e6, 200],
  ['2^24 chars (the tokenizer limit)', MAX_ENCODE_CHARS, 200],
  ['32MiB (over the limit)', 32 * MiB - 64, 400],
];
const tokenizeBody = (chars) => JSON.stringify({ prompt: 'Ann has 12 apples. '.repeat(Math.floor(chars / 19)) });

async function start(extra = []) {
  const s = await startBin(
    BIN,
    ['--model', MODEL, '--port', '0', '--served-model-name', 'm', '--workers', '1', '--quiet', ...extra],
    /on (http:\/\/\S+)\/v1/,
  );
  return { ...s, url: s.match[1] };
}

const completion = (i, extra = {}) => JSON.stringify({ model: 'm', prompt: `Ann has ${i} apples.`, max_tokens: 8, seed: i, ...extra });
const completed = (_, a) => JSON.parse(a.body).choices?.[0]?.finish_reason !== undefined;

/** [name, route, body, expected status]: the hostile inputs. */
function hostile() {
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  const stop = Array.from({ length: 10_000 }, (_, i) => `s${i}`);
  return [
    ['n 1e6', '/v1/completions', JSON.stringify({ model: 'm', prompt: 'a', n: 1e6 }), 400],
    ['max_tokens 1e9', '/v1/completions', JSON.stringify({ model: 'm', prompt: 'a', max_tokens: 1e9 }), 400],
    ['a 10 MB prompt', '/v1/completions', JSON.stringify({ model: 'm', prompt: 'x '.repeat(5 * MiB) }), 400],
    [
      'a 10 MB chat message',
      '/v1/chat/completions',
      JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x '.repeat(5 * MiB) }] }),
      400,
    ],
    ['1e5-deep JSON at the top', '/v1/completions', deep, 400],
    ['1e5-deep JSON in prompt', '/v1/completions', `{"model":"m","prompt":${deep}}`, 400],
    ['1e5-deep JSON in stop', '/v1/completions', `{"model":"m","prompt":"a","stop":${deep}}`, 400],
    ['1e5-deep JSON in logit_bias', '/v1/completions', `{"model":"m","prompt":"a","logit_bias":{"1":${deep}}}`, 400],
    ['1e5-deep JSON in messages[0].content', '/v1/chat/completions', `{"model":"m","messages":[{"role":"user","content":${deep}}]}`, 400],
    ['1e5-deep JSON in /tokenize prompt', '/tokenize', `{"prompt":${deep}}`, 400],
    ['1e5-deep JSON in /detokenize tokens', '/detokenize', `{"tokens":${deep}}`, 400],
    ['a prompt token id 1e9', '/v1/completions', JSON.stringify({ model: 'm', prompt: [1e9] }), 400],
    ['a prompt token id -1', '/v1/completions', JSON.stringify({ model: 'm', prompt: [-1] }), 400],
    ['a /detokenize id past the vocabulary', '/detokenize', JSON.stringify({ tokens: [1, 2, 100_000] }), 400],
    [
      'a logit_bias id past the vocabulary',
      '/v1/completions',
      JSON.stringify({ model: 'm', prompt: 'a', logit_bias: { 99999999: 1 } }),
      400,
    ],
    [
      'a stop_token_ids id past the vocabulary',
      '/v1/completions',
      JSON.stringify({ model: 'm', prompt: 'a', stop_token_ids: [5000] }),
      400,
    ],
    ['__proto__ parameter', '/v1/completions', '{"model":"m","prompt":"a","__proto__":{"max_tokens":100000}}', 400],
    ['__proto__ in /tokenize', '/tokenize', '{"prompt":"a","__proto__":{"x":1}}', 400],
    ['10,000 stop strings', '/v1/completions', JSON.stringify({ model: 'm', prompt: 'a', stop }), 400],
    ['a 1 MB model name', '/v1/completions', JSON.stringify({ model: 'm'.repeat(MiB), prompt: 'a' }), 404],
    ['not JSON', '/v1/completions', '{"model": "m", "prompt": ', 400],
    ['empty body', '/v1/completions', '', 400],
    [
      'a chat template that loops (text thread limit 5 s here)',
      '/v1/chat/completions',
      JSON.stringify({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        chat_template: '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}',
      }),
      400,
    ],
  ];
}

/** /health every 10 ms while `body` is sent to /tokenize: the latencies, and the /tokenize answer. */
async function healthDuring(url, body) {
  const big = send(`${url}/tokenize`, { body, timeoutMs: 600_000 });
  let done = false;
  big.then(() => (done = true));
  const ms = [];
  while (!done) {
    const h = await send(`${url}/health`, { method: 'GET' });
    if (h.status === 200) ms.push(h.ms);
    await new Promise((r) => setTimeout(r, 10));
  }
  const answer = await big;
  let error;
  try {
    error = JSON.parse(answer.body).error?.message;
  } catch {}
  return {
    status: answer.status ?? answer.error,
    ...(error === undefined ? {} : { error: error.slice(0, 200) }),
    tokenizeMs: round(answer.ms),
    healthAnswers: ms.length,
    healthP50Ms: round(quantile(ms, 0.5)),
    healthMaxMs: round(Math.max(...ms, 0)),
  };
}

/** `n` /health probes 10 ms apart with nothing else running: the baseline of the figures above. */
async function healthIdle(url, n) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    ms.push((await send(`${url}/health`, { method: 'GET' })).ms);
    await new Promise((r) => setTimeout(r, 10));
  }
  return { healthAnswers: n, healthP50Ms: round(quantile(ms, 0.5)), healthMaxMs: round(Math.max(...ms)) };
}

/** A streamed completion that the client leaves after its first chunk: ms until /metrics shows no row running. */
async function leaveMidStream(url) {
  const t0 = performance.now();
  await new Promise((resolve) => {
    const body = JSON.stringify({ model: 'm', prompt: 'Ann', max_tokens: 240, ignore_eos: true, n: 8, stream: true });
    const req = request(
      `${url}/v1/completions`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      },
    );
    req.on('error', () => resolve());
    req.end(body);
  });
  const left = performance.now();
  for (;;) {
    const m = (await send(`${url}/metrics`, { method: 'GET' })).body;
    if (/^rlvr:num_sequences_running\{[^}]*\} 0$/m.test(m)) break;
    if (performance.now() - left > 30_000) return { freedMs: null };
    await new Promise((r) => setTimeout(r, 5));
  }
  return { firstChunkMs: round(left - t0), freedMs: round(performance.now() - left) };
}

/** 64 sockets that trickle a header line a second while 16 clients run completions; then how long until the server cut them. */
async function slowloris(url, perClient) {
  const u = new URL(url);
  const t0 = performance.now();
  const sockets = Array.from({ length: 64 }, () => {
    const c = connect(Number(u.port), u.hostname);
    const s = { got: '', closedMs: null };
    c.on('data', (d) => (s.got += d.toString('latin1')));
    c.on('error', () => {});
    c.on('close', () => (s.closedMs = performance.now() - t0));
    c.write('POST /v1/completions HTTP/1.1\r\nHost: x\r\n');
    const t = setInterval(() => c.write('X-a: b\r\n'), 1000);
    c.on('close', () => clearInterval(t));
    return { c, s, t };
  });
  const result = await load(`${url}/v1/completions`, { clients: 16, perClient, make: completion, check: completed });
  // the default --headers-timeout-ms is 20 s: wait up to 40 s for the cutoffs
  while (sockets.some((x) => x.s.closedMs === null) && performance.now() - t0 < 40_000) await new Promise((r) => setTimeout(r, 100));
  const closed = sockets.filter((x) => x.s.closedMs !== null);
  for (const x of sockets) {
    clearInterval(x.t);
    x.c.destroy();
  }
  return {
    ...result,
    slowSockets: 64,
    cutOff408: closed.filter((x) => x.s.got.startsWith('HTTP/1.1 408')).length,
    stillOpenAfter40s: 64 - closed.length,
    lastCutSeconds: closed.length ? round(Math.max(...closed.map((x) => x.s.closedMs)) / 1000) : null,
  };
}

/** A request on a kept-alive agent: status and the connection header, or the error code. */
function post(url, body, agent) {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode, connection: res.headers.connection, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', (e) => resolve({ error: e.code ?? e.message }));
    req.end(body);
  });
}

export default {
  name: 'serve',
  async run({ scale, log }) {
    const out = {};
    const s = await start(['--text-timeout-ms', '5000']);
    try {
      log('hostile bodies');
      out.hostile = [];
      for (const [name, route, body, want] of hostile()) {
        const a = await send(`${s.url}${route}`, { body });
        let message = null;
        try {
          message = JSON.parse(a.body).error?.message ?? null;
        } catch {}
        out.hostile.push({
          name,
          route,
          want,
          got: a.status ?? a.error,
          ok: a.status === want,
          ms: round(a.ms),
          messageChars: message?.length ?? null,
        });
      }
      out.hostileServerAlive = (await send(`${s.url}/health`, { method: 'GET' })).status === 200;
      log('a client leaving mid-stream');
      out.leaveMidStream = await leaveMidStream(s.url);
      log('64 slowloris connections under 16 clients');
      out.slowloris = await slowloris(s.url, Math.max(1, Math.round(25 * scale)));
    } finally {
      s.child.kill('SIGTERM');
      await s.exited;
    }

    // a server of its own: the one above limits the text thread to 5 s a body, which a loaded machine's encoding of
    // 10 MB passes (a 400), and this probe is about /health, not that limit
    log('/health during /tokenize of 10 MB, 2^24 characters and 32 MiB (text thread)');
    const tok = await start(['--text-timeout-ms', '600000']);
    try {
      out.healthIdle = await healthIdle(tok.url, 200);
      out.healthDuringTokenize = {};
      for (const [label, chars, want] of TOKENIZE_CASES) {
        const body = tokenizeBody(chars);
        out.healthDuringTokenize[label] = { bodyBytes: Buffer.byteLength(body), want, ...(await healthDuring(tok.url, body)) };
      }
    } finally {
      tok.child.kill('SIGTERM');
      await tok.exited;
    }

    log('/health during /tokenize of 10 MB and 32 MiB, every body in the server thread (as before the text thread)');
    const before = await start(['--inline-body-bytes', String(2 ** 31 - 1)]);
    try {
      out.healthDuringTokenizeInline = {};
      for (const [label, chars, want] of TOKENIZE_CASES.filter(([, chars]) => chars !== MAX_ENCODE_CHARS)) {
        const body = tokenizeBody(chars);
        out.healthDuringTokenizeInline[label] = { bodyBytes: Buffer.byteLength(body), want, ...(await healthDuring(before.url, body)) };
      }
    } finally {
      before.child.kill('SIGTERM');
      await before.exited;
    }

    log('slow bodies: 256 connections send headers and a byte of body, then stall (--request-timeout-ms 5000)');
    const b = await start(['--request-timeout-ms', '5000']);
    try {
      const stalled = stalledBodies(b.url, '/v1/completions', 256, 65_000);
      await stalled.sent;
      const health = await healthProbes(b.url, 50);
      const served = await load(`${b.url}/v1/completions`, { clients: 4, perClient: 10, make: completion, check: completed });
      out.slowBodies = { ...health, ...served, ...(await stalled.settled()) };
    } finally {
      b.child.kill('SIGTERM');
      await b.exited;
    }

    log('SIGTERM with 32 requests in the accept queue (the server stopped while they were sent on fresh connections)');
    const q = await start();
    out.sigtermAcceptQueue = await sigtermAcceptQueue(q, `${q.url}/v1/completions`, 32, (i) => completion(i));

    log('SIGTERM with 32 requests in flight, and keep-alive after it');
    const t = await start();
    const agent = new Agent({ keepAlive: true, maxSockets: 32 });
    const warm = await Promise.all(Array.from({ length: 32 }, (_, i) => post(`${t.url}/v1/completions`, completion(i), agent)));
    const inflight = Array.from({ length: 32 }, (_, i) =>
      post(`${t.url}/v1/completions`, completion(i, { max_tokens: 64, ignore_eos: true }), agent),
    );
    await new Promise((r) => setTimeout(r, 100));
    t.child.kill('SIGTERM');
    const answers = await Promise.all(inflight);
    await new Promise((r) => setTimeout(r, 500));
    const later = await Promise.all(Array.from({ length: 8 }, (_, i) => post(`${t.url}/v1/completions`, completion(i), agent)));
    const exit = await t.exited;
    agent.destroy();
    out.sigterm = {
      requests: 32,
      warmKeptAlive: warm.filter((a) => a.connection === 'keep-alive').length,
      answered200: answers.filter((a) => a.status === 200 && completed(0, a)).length,
      // not yet read when the signal came: refused, which a client retries elsewhere
      answered503: answers.filter((a) => a.status === 503).length,
      answeredWithConnectionClose: answers.filter((a) => a.connection === 'close').length,
      connectionRefused: answers.filter((a) => a.error === 'ECONNREFUSED').length,
      cut: answers.filter((a) => a.error !== undefined && a.error !== 'ECONNREFUSED').length,
      errors: [...new Set(answers.filter((a) => a.error !== undefined).map((a) => a.error))],
      exitCode: exit.code,
    };
    out.keepAliveAfterSigterm = {
      requests: 8,
      sentMsAfterAnswers: 500,
      refused: later.filter((a) => a.error === 'ECONNREFUSED').length,
      answeredWithClose: later.filter((a) => a.connection === 'close').length,
      reset: later.filter((a) => a.error === 'ECONNRESET').length,
      other: later
        .filter((a) => !(a.error === 'ECONNREFUSED' || a.connection === 'close' || a.error === 'ECONNRESET'))
        .map((a) => a.error ?? a.status),
    };
    return out;
  },
  /** The failures in a result (empty when every probe held). */
  failures(r) {
    const f = [];
    for (const h of r.hostile) {
      if (!h.ok) f.push(`hostile "${h.name}" on ${h.route}: got ${h.got}, want ${h.want}`);
      if (h.messageChars !== null && h.messageChars > 600) f.push(`hostile "${h.name}": a ${h.messageChars}-character error message`);
    }
    if (!r.hostileServerAlive) f.push('the server did not answer /health after the hostile bodies');
    if (r.leaveMidStream.freedMs === null) f.push('a client that left mid-stream: its rows still ran 30 s later');
    for (const [k, v] of Object.entries(r.healthDuringTokenize)) {
      if (v.status !== v.want || v.healthAnswers === 0) f.push(`/health during a ${k} /tokenize: ${JSON.stringify(v)}`);
      if (v.healthMaxMs >= 100) f.push(`/health during a ${k} /tokenize took up to ${v.healthMaxMs} ms (goal: under 100)`);
    }
    if (r.slowloris.lost || r.slowloris.mismatched) f.push(`slowloris: ${r.slowloris.lost} lost, ${r.slowloris.mismatched} mismatched`);
    if (r.slowloris.stillOpenAfter40s) f.push(`slowloris: ${r.slowloris.stillOpenAfter40s} connections still open after 40 s`);
    const b = r.slowBodies;
    if (b.health200 !== b.healthAnswers || b.lost || b.mismatched || b.stillOpen || b.answered408 !== b.stalled)
      f.push(`slow bodies: ${JSON.stringify(b)}`);
    if (r.sigtermAcceptQueue.failed || r.sigtermAcceptQueue.exitCode !== 0)
      f.push(`SIGTERM with requests in the accept queue: ${JSON.stringify(r.sigtermAcceptQueue)}`);
    const t = r.sigterm;
    if (
      t.cut ||
      t.exitCode !== 0 ||
      t.answered200 + t.answered503 + t.connectionRefused !== t.requests ||
      t.answeredWithConnectionClose !== t.answered200 + t.answered503
    )
      f.push(`SIGTERM: ${JSON.stringify(t)}`);
    if (r.keepAliveAfterSigterm.reset || r.keepAliveAfterSigterm.other.length)
      f.push(`keep-alive after SIGTERM: ${JSON.stringify(r.keepAliveAfterSigterm)}`);
    return f;
  },
};
