// Probes of rlvr-reward-server (the bin, on loopback): load on both routes, hostile bodies, a 413 to a client
// that sends its whole body first, /health during a batch at the token limit, slow clients (headers trickled, bodies
// stalled), SIGTERM under load and SIGTERM with requests in the accept queue.
import { connect } from 'node:net';
import { join } from 'node:path';
import { healthProbes, load, ROOT, round, send, sigtermAcceptQueue, stalledBodies, startBin } from '../lib.mjs';

const BIN = join(ROOT, 'packages/reward-server/bin/rlvr-reward-server.js');
const MiB = 1024 * 1024;

async function start(extra = []) {
  const s = await startBin(BIN, ['--port', '0', '--concurrency', '2', ...extra], /listening on (http:\/\/\S+)/);
  return { ...s, url: s.match[1] };
}

/** The i-th /get_reward request: one completion whose box is right for even i, wrong for odd i. */
const rewardBody = (i) =>
  JSON.stringify({
    query: [`Q${i}: what is ${i}+1?\nA: so \\boxed{${i + 1 + (i % 2)}}`],
    prompts: [`Q${i}: what is ${i}+1?\n`],
    labels: [String(i + 1)],
  });
const rewardOk = (i, a) => JSON.parse(a.body).rewards[0] === (i % 2 === 0 ? 1 : 0);

/** 16 distinct /advantages batches (GRAIL on 4 groups of 4 rows); their answers are taken one at a time first. */
const ADV_VARIANTS = Array.from({ length: 16 }, (_, v) =>
  JSON.stringify({
    estimator: 'grail',
    rows: Array.from({ length: 16 }, (_, r) => {
      const length = 8 + ((v + r) % 5);
      return {
        group: r >> 2,
        reward: (v + r) % 3 === 0 ? 1 : 0,
        length,
        saliency: Array.from({ length }, (_, t) => ((v * 7 + r * 3 + t) % 11) / 10 + 0.05),
        spans: { open: [length - 4, length - 3], content: [length - 3, length - 2], close: [length - 2, length - 1] },
      };
    }),
  }),
);

/** Writes headers and the whole body of `bytes`, then reads: what urllib-like clients see. */
function sendAllThenRead(url, bytes) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = connect(Number(u.port), u.hostname);
    let reply = '';
    let settled = false;
    const done = (r) => {
      if (settled) return;
      settled = true;
      s.destroy();
      resolve(r);
    };
    s.on('error', (e) => done({ error: e.code ?? e.message }));
    s.on('data', (c) => {
      reply += c.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(reply);
      if (m) done({ status: Number(m[1]) });
    });
    s.on('end', () => done({ error: 'closed without an answer' }));
    s.on('connect', async () => {
      s.write(`POST /get_reward HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${bytes}\r\n\r\n`);
      const piece = Buffer.alloc(256 * 1024, 0x20);
      for (let sent = 0; sent < bytes && !settled; sent += piece.length)
        if (!s.write(piece.subarray(0, Math.min(piece.length, bytes - sent)))) await new Promise((r) => s.once('drain', r));
    });
  });
}

/** [name, route, body, expected status]: the hostile inputs. */
function hostile() {
  const deep = '['.repeat(400_000) + ']'.repeat(400_000);
  return [
    [
      'two rows of length 2e8 (130 bytes)',
      '/advantages',
      '[{"group":0,"reward":1,"length":200000000},{"group":0,"reward":0,"length":200000000}]',
      413,
    ],
    ['a row of length 2^31', '/advantages', '[{"group":0,"reward":1,"length":2147483648}]', 400],
    ['a row of negative length', '/advantages', '[{"group":0,"reward":1,"length":-1}]', 400],
    ['saliency shorter than length', '/advantages', '[{"group":0,"reward":1,"length":3,"saliency":[1]}]', 400],
    ['NaN reward', '/advantages', '[{"group":0,"reward":"NaN","length":3}]', 400],
    ['__proto__ row keys', '/advantages', '[{"group":0,"reward":1,"length":2,"__proto__":{"x":1}}]', 400],
    ['unknown estimator', '/advantages?estimator=magic', '[{"group":0,"reward":1,"length":2}]', 400],
    ['an estimator option __proto__', '/advantages?__proto__=1', '[{"group":0,"reward":1,"length":2}]', 400],
    ['400,000 nested arrays', '/advantages', deep, 400],
    ['400,000 nested arrays', '/get_reward', deep, 400],
    ['not JSON', '/get_reward', '{"query": [', 400],
    ['query of numbers', '/get_reward', '{"query": [1, 2], "labels": ["1", "2"]}', 400],
    ['labels shorter than query', '/get_reward', '{"query": ["a", "b"], "labels": ["1"]}', 400],
    ['a 1 MB completion with a right box', '/get_reward', JSON.stringify({ query: ['x'.repeat(MiB) + '\\boxed{2}'], labels: ['2'] }), 200],
    ['empty body', '/get_reward', '', 400],
  ];
}

export default {
  name: 'reward-server',
  async run({ scale, log }) {
    const out = {};
    const s = await start();
    try {
      const perClient = Math.max(1, Math.round(2000 * scale));
      log(`load: /get_reward, 8 clients x ${perClient}`);
      out.getReward = await load(`${s.url}/get_reward`, { clients: 8, perClient, make: rewardBody, check: rewardOk });
      const expected = [];
      for (const body of ADV_VARIANTS) expected.push((await send(`${s.url}/advantages`, { body })).body);
      log(`load: /advantages, 8 clients x ${perClient}`);
      out.advantages = await load(`${s.url}/advantages`, {
        clients: 8,
        perClient,
        make: (i) => ADV_VARIANTS[i % 16],
        check: (i, a) => a.body === expected[i % 16],
      });

      log('hostile bodies');
      out.hostile = [];
      for (const [name, route, body, want] of hostile()) {
        const a = await send(`${s.url}${route}`, { body });
        out.hostile.push({ name, route, want, got: a.status ?? a.error, ok: a.status === want, ms: round(a.ms) });
      }
      const health = await send(`${s.url}/health`, { method: 'GET' });
      out.hostileServerAlive = health.status === 200;

      log('413 to clients that send the whole body first');
      out.sendFirst413 = [];
      for (const mb of [70, 100]) out.sendFirst413.push({ bodyMiB: mb, ...(await sendAllThenRead(s.url, mb * MiB)) });

      log('/health while a batch at the token limit (2^22 tokens) is estimated');
      const rows = Array.from({ length: 4 }, (_, r) => ({ group: 0, reward: r % 2, length: 2 ** 20 }));
      const big = send(`${s.url}/advantages?estimator=grpo`, { body: JSON.stringify(rows) });
      const healthMs = [];
      let bigDone = false;
      big.then(() => (bigDone = true));
      while (!bigDone) {
        const h = await send(`${s.url}/health`, { method: 'GET' });
        if (h.status === 200) healthMs.push(h.ms);
        await new Promise((r) => setTimeout(r, 10));
      }
      const bigAnswer = await big;
      out.healthDuringLimitBatch = {
        batchStatus: bigAnswer.status,
        batchMs: round(bigAnswer.ms),
        healthAnswers: healthMs.length,
        healthMaxMs: round(Math.max(...healthMs, 0)),
      };

      log('slow clients: 64 connections trickling headers while 200 requests run');
      const slow = Array.from({ length: 64 }, () => {
        const u = new URL(s.url);
        const c = connect(Number(u.port), u.hostname);
        c.on('error', () => {});
        c.write('POST /get_reward HTTP/1.1\r\nHost: x\r\n');
        const t = setInterval(() => c.write('X-a: b\r\n'), 1000);
        return { c, t };
      });
      out.slowClients = await load(`${s.url}/get_reward`, { clients: 4, perClient: 50, make: rewardBody, check: rewardOk });
      for (const { c, t } of slow) {
        clearInterval(t);
        c.destroy();
      }
    } finally {
      s.child.kill('SIGTERM');
      await s.exited;
    }

    log('slow bodies: 256 connections send headers and a byte of body, then stall (--body-timeout-ms 5000)');
    const b = await start(['--body-timeout-ms', '5000']);
    try {
      const stalled = stalledBodies(b.url, '/get_reward', 256, 65_000);
      await stalled.sent;
      // every stalled body is being received before the probes start
      for (const until = performance.now() + 60_000; performance.now() < until; ) {
        const h = await send(`${b.url}/health`, { method: 'GET' });
        if (h.status === 200 && JSON.parse(h.body).stats.receiving === 256) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const health = await healthProbes(b.url, 50);
      const served = await load(`${b.url}/get_reward`, { clients: 4, perClient: 50, make: rewardBody, check: rewardOk });
      out.slowBodies = { ...health, ...served, ...(await stalled.settled()) };
    } finally {
      b.child.kill('SIGTERM');
      await b.exited;
    }

    log('SIGTERM with 32 requests in the accept queue (the server stopped while they were sent on fresh connections)');
    const q = await start();
    out.sigtermAcceptQueue = await sigtermAcceptQueue(q, `${q.url}/get_reward`, 32, rewardBody);

    log('SIGTERM under load: 64 requests in flight');
    const t = await start(['--timeout-ms', '20000']);
    const inflight = Array.from({ length: 64 }, (_, i) => send(`${t.url}/get_reward`, { body: rewardBody(i) }));
    await new Promise((r) => setTimeout(r, 50));
    t.child.kill('SIGTERM');
    const answers = await Promise.all(inflight);
    const exit = await t.exited;
    out.sigterm = {
      requests: 64,
      answered200Right: answers.filter((a, i) => a.status === 200 && rewardOk(i, a)).length,
      refused503: answers.filter((a) => a.status === 503).length,
      // not yet connected when the listener closed: refused, which a client retries elsewhere
      connectionRefused: answers.filter((a) => a.error === 'ECONNREFUSED').length,
      // accepted and then cut: a lost request
      cut: answers.filter((a) => a.error !== undefined && a.error !== 'ECONNREFUSED').length,
      cutErrors: [...new Set(answers.filter((a) => a.error !== undefined).map((a) => a.error))],
      wrong: answers.filter((a, i) => a.status === 200 && !rewardOk(i, a)).length,
      exitCode: exit.code,
    };
    return out;
  },
  /** The failures in a result (empty when every probe held). */
  failures(r) {
    const f = [];
    for (const k of ['getReward', 'advantages', 'slowClients'])
      if (r[k].lost || r[k].mismatched) f.push(`${k}: ${r[k].lost} lost, ${r[k].mismatched} mismatched`);
    for (const h of r.hostile) if (!h.ok) f.push(`hostile "${h.name}" on ${h.route}: got ${h.got}, want ${h.want}`);
    if (!r.hostileServerAlive) f.push('the server did not answer /health after the hostile bodies');
    const b = r.slowBodies;
    if (b.health200 !== b.healthAnswers || b.lost || b.mismatched || b.stillOpen || b.answered408 !== b.stalled)
      f.push(`slow bodies: ${JSON.stringify(b)}`);
    if (r.sigtermAcceptQueue.failed || r.sigtermAcceptQueue.exitCode !== 0)
      f.push(`SIGTERM with requests in the accept queue: ${JSON.stringify(r.sigtermAcceptQueue)}`);
    for (const x of r.sendFirst413)
      if (x.status !== 413 && x.bodyMiB <= 128) f.push(`send-first client, ${x.bodyMiB} MiB: ${x.status ?? x.error}`);
    if (r.healthDuringLimitBatch.batchStatus !== 200 || r.healthDuringLimitBatch.healthAnswers === 0)
      f.push(`/health during a batch at the limit: ${JSON.stringify(r.healthDuringLimitBatch)}`);
    if (
      r.sigterm.wrong ||
      r.sigterm.cut ||
      r.sigterm.exitCode !== 0 ||
      r.sigterm.answered200Right + r.sigterm.refused503 + r.sigterm.connectionRefused !== r.sigterm.requests
    )
      f.push(`SIGTERM: ${JSON.stringify(r.sigterm)}`);
    return f;
  },
};
