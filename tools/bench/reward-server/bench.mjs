// Load test of rlvr-reward-server on loopback, with the in-process VerifierPool measured in the same run as the
// baseline. Several clients each keep one POST /get_reward of `batch` completions in flight for `seconds`; every
// reply is checked (status, count, order, every reward equal to in-process mathReward). Run after building:
//   npx tsc -b packages/reward-server && node tools/bench/reward-server/bench.mjs [--seconds 12] [--clients 4] \
//     [--batch 256] [--slow 2] [--timeout-ms 250] [--concurrency N] [--rounds 5] [--json out.json]
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { VerifierPool, mathReward } from '../../../packages/math-verify/dist/index.js';
import { PATHOLOGICAL, makeBatch } from './mix.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '12' },
    clients: { type: 'string', default: '4' },
    batch: { type: 'string', default: '256' },
    slow: { type: 'string', default: '2' },
    'timeout-ms': { type: 'string', default: '250' },
    concurrency: { type: 'string', default: String(availableParallelism()) },
    rounds: { type: 'string', default: '5' },
    json: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const CLIENTS = Number(values.clients);
const BATCH = Number(values.batch);
const SLOW = Number(values.slow);
const TIMEOUT_MS = Number(values['timeout-ms']);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = Number(values.rounds);
const DISTINCT = 32; // distinct batches, cycled

// The reference: in-process mathReward, memoised (the pathological strings repeat; each takes seconds).
const memo = new Map();
const reference = (c, g) => {
  const key = `${g}\u0000${c}`;
  if (!memo.has(key)) memo.set(key, mathReward(c, g).reward);
  return memo.get(key);
};
// What one pathological item costs without a budget (in-process, single thread), for comparison with the latencies.
const pathologicalMs = PATHOLOGICAL.map(({ completion, gold }) => {
  const t = performance.now();
  memo.set(`${gold}\u0000${completion}`, mathReward(completion, gold).reward);
  return Math.round(performance.now() - t);
});
const batches = Array.from({ length: DISTINCT }, (_, s) => {
  const b = makeBatch(s + 1, BATCH, SLOW);
  return {
    ...b,
    want: b.completions.map((c, i) => reference(c, b.golds[i])),
    body: JSON.stringify({ query: b.completions.map((c, i) => b.prompts[i] + c), prompts: b.prompts, labels: b.golds }),
  };
});

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** Runs `clients` loops of `call(batch)` for SECONDS; the tally of every call. */
async function drive(call) {
  const lat = [];
  let answers = 0;
  let bad = 0;
  let timeouts = 0;
  let next = 0;
  const t0 = performance.now();
  const loop = async () => {
    while (performance.now() - t0 < SECONDS * 1000) {
      const b = batches[next++ % DISTINCT];
      const s = performance.now();
      const r = await call(b);
      lat.push(performance.now() - s);
      if (r.ok && r.rewards.length === b.want.length && r.rewards.every((x, i) => x === b.want[i])) answers += r.rewards.length;
      else bad++;
      timeouts += r.timeouts;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, loop));
  const secs = (performance.now() - t0) / 1000;
  return {
    requests: lat.length,
    badReplies: bad,
    answersPerSecond: Math.round(answers / secs),
    requestsPerSecond: +(lat.length / secs).toFixed(2),
    p50Ms: Math.round(pct(lat, 50)),
    p99Ms: Math.round(pct(lat, 99)),
    maxMs: Math.round(Math.max(...lat)),
    timeoutsPerRequest: +(timeouts / lat.length).toFixed(2),
  };
}

// --- the in-process pool (baseline) ---
const pool = new VerifierPool({ concurrency: CONCURRENCY, timeoutMs: TIMEOUT_MS });
const inProcess = async (b) => {
  const res = await pool.rewardBatch(b.completions, b.golds);
  return { ok: true, rewards: res.map((r) => r.reward), timeouts: res.filter((r) => r.reason === 'timeout').length };
};

// --- the server, as a child process (its event loop is not the clients') ---
const cli = fileURLToPath(new URL('../../../packages/reward-server/dist/cli.js', import.meta.url));
const child = spawn(process.execPath, [cli, '--port', '0', '--concurrency', String(CONCURRENCY), '--timeout-ms', String(TIMEOUT_MS)], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (c) => {
    out += c;
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
    if (m) resolve(m[1]);
  });
  child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
});
const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
const overHttp = (b) =>
  new Promise((resolve) => {
    const req = request(`${url}/get_reward`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        try {
          const j = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          resolve({
            ok: res.statusCode === 200,
            rewards: j.rewards ?? [],
            timeouts: (j.extra_logs?.timeout ?? []).reduce((a, x) => a + x, 0),
          });
        } catch {
          resolve({ ok: false, rewards: [], timeouts: 0 });
        }
      });
    });
    req.on('error', () => resolve({ ok: false, rewards: [], timeouts: 0 }));
    req.end(b.body);
  });

// Warm-up: start the threads and JIT the verifier on both sides.
await Promise.all(batches.slice(0, 2).map(inProcess));
await Promise.all(batches.slice(0, 2).map(overHttp));

const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const uptimeBefore = uptime();
const load0 = loadavg()[0];
const rounds = [];
for (let r = 0; r < ROUNDS; r++) rounds.push({ inProcessPool: await drive(inProcess), server: await drive(overHttp) });
const load1 = loadavg()[0];
const uptimeAfter = uptime();
agent.destroy();
child.kill('SIGTERM');
await new Promise((resolve) => child.on('exit', resolve));
await pool.close();

// The machine is shared: pool and server alternate round by round; the ratio is taken per round, then the median.
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const baseline = median(rounds.map((x) => x.inProcessPool.answersPerSecond));
const served = median(rounds.map((x) => x.server.answersPerSecond));
const ratios = rounds.map((x) => +(x.server.answersPerSecond / x.inProcessPool.answersPerSecond).toFixed(2));
const result = {
  machine: `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), availableParallelism ${availableParallelism()}, node ${process.version}`,
  // what else ran: the load average around the timed rounds (the warm-up is before them)
  loadAverage1mBeforeAfter: [+load0.toFixed(2), +load1.toFixed(2)],
  uptimeBefore,
  uptimeAfter,
  pathologicalItemInProcessMs: pathologicalMs,
  settings: {
    seconds: SECONDS,
    clients: CLIENTS,
    batch: BATCH,
    pathologicalPerBatch: SLOW,
    timeoutMs: TIMEOUT_MS,
    workers: CONCURRENCY,
    rounds: ROUNDS,
  },
  rounds,
  medianInProcessPoolAnswersPerSecond: baseline,
  medianServerAnswersPerSecond: served,
  serverOverInProcessPoolPerRound: ratios,
  medianServerOverInProcessPool: median(ratios),
  serverP99OverTimeout: +(Math.max(...rounds.map((x) => x.server.p99Ms)) / TIMEOUT_MS).toFixed(1),
  allRepliesCorrect: rounds.every((x) => x.server.badReplies === 0 && x.inProcessPool.badReplies === 0),
};
console.log(JSON.stringify(result, null, 2));
if (values.json) writeFileSync(values.json, JSON.stringify(result, null, 2) + '\n');
