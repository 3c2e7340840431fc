// rlvr-serve under load, on loopback (issue 18): the server runs as its own process (the built
// bin, as users start it), the clients here.
//
//   1. load: C concurrent clients x R requests each (default 8 x 200), one completion each; none may
//      be lost (every answer a 200 with one choice of the asked length), p50 / p99 latency;
//   2. throughput: the same Q requests (default 64, max_tokens T = 64 generated, ignore_eos) sent by
//      C concurrent clients and by one client at a time, alternating for --rounds rounds; the
//      generated tokens/s of each, and the ratio (continuous batching's gain; goal >= 3x).
//   3. with --workers N > 1 (issue 17): the load runs against a server of N policy workers, and the
//      throughput rounds add C clients against a second server of 1 worker (the in-process batch,
//      --batch-size rows) next to the N-worker one (--batch-size rows per worker): the tokens/s of
//      each and their ratio. Only one server is driven at a time; the idle one takes no CPU.
//
//   npm run build && node tools/bench/rollout/serve-load.mjs [--model DIR] [--backend wasm]
//        [--clients 8] [--requests 200] [--max-tokens 32] [--throughput-requests 64]
//        [--throughput-tokens 64] [--batch-size 16] [--rounds 2] [--workers 1]
//
// Default model: the embedded warm-up checkpoint (344k parameters). Prints `uptime` before and
// after and a JSON summary; the figures of a shared machine move with its load.
import { execSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { syntheticGenerator } from '@rlvr/rollout';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: fileURLToPath(new URL('../../../packages/reference-trainer/assets/warmup', import.meta.url)) },
    backend: { type: 'string', default: 'wasm' },
    clients: { type: 'string', default: '8' },
    requests: { type: 'string', default: '200' },
    'max-tokens': { type: 'string', default: '32' },
    'throughput-requests': { type: 'string', default: '64' },
    'throughput-tokens': { type: 'string', default: '64' },
    'batch-size': { type: 'string', default: '16' },
    rounds: { type: 'string', default: '2' },
    workers: { type: 'string', default: '1' },
  },
});
const C = Number(values.clients);
const R = Number(values.requests);
const T = Number(values['max-tokens']);
const Q = Number(values['throughput-requests']);
const TT = Number(values['throughput-tokens']);
const W = Number(values.workers);
if (!Number.isInteger(W) || W < 1) throw new Error(`--workers must be an integer >= 1, got ${values.workers}`);
const uptime = () => execSync('uptime').toString().trim();
const before = uptime();
console.log(`uptime before: ${before}`);

const bin = fileURLToPath(new URL('../../../packages/rollout/dist/serve-bin.js', import.meta.url));
/** An rlvr-serve process of `workers` policy workers, and the URL it serves on. */
async function startServer(workers) {
  const child = spawn(
    process.execPath,
    [
      bin,
      '--model',
      values.model,
      '--port',
      '0',
      '--backend',
      values.backend,
      '--batch-size',
      values['batch-size'],
      '--workers',
      String(workers),
      '--served-model-name',
      'bench',
      '--quiet',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) =>
      resolve(/on (http:\/\/\S+)/.exec(line)?.[1] ?? reject(new Error(line))),
    );
    child.once('exit', (code) => reject(new Error(`rlvr-serve exited with ${code}`)));
  });
  return { child, url, workers };
}
const main = await startServer(W);
// the 1-worker server to compare with
const single = W > 1 ? await startServer(1) : null;

const gen = syntheticGenerator({ minSteps: 2, maxSteps: 3, digits: 2 });
const prompt = (i) =>
  `User: ${gen.task(7, i).question} Please reason step by step, and put your final answer within \\boxed{}.\n\nAssistant:\n`;

async function complete(i, maxTokens, extra = {}, url = main.url) {
  const t0 = performance.now();
  const res = await fetch(`${url}/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'bench', prompt: prompt(i), max_tokens: maxTokens, temperature: 1, seed: i, ...extra }),
  });
  const body = await res.json();
  const ms = performance.now() - t0;
  const ok =
    res.status === 200 && body.choices?.length === 1 && body.usage.completion_tokens >= 1 && body.usage.completion_tokens <= maxTokens;
  return { ok, status: res.status, ms, tokens: body.usage?.completion_tokens ?? 0, text: body.choices?.[0]?.text };
}

/** `clients` workers draining `count` requests; results in request order. */
async function drive(count, clients, run) {
  const out = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await run(i);
      }
    }),
  );
  return out;
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

await complete(0, 4); // warm-up
if (single) await complete(0, 4, {}, single.url);
console.log(`load: ${C} clients x ${R} requests, max_tokens ${T}, batch ${values['batch-size']}, ${W} worker(s)`);
const t0 = performance.now();
const load = await drive(C * R, C, (i) => complete(i, T).catch((e) => ({ ok: false, status: String(e), ms: 0, tokens: 0 })));
const loadS = (performance.now() - t0) / 1000;
const lost = load.filter((r) => !r.ok);
const lat = load.filter((r) => r.ok).map((r) => r.ms);
const loadTokens = load.reduce((n, r) => n + r.tokens, 0);
console.log(
  `  ${load.length} requests, ${lost.length} lost, ${loadTokens} tokens in ${loadS.toFixed(1)} s; latency p50 ${pct(lat, 0.5).toFixed(0)} ms, p99 ${pct(lat, 0.99).toFixed(0)} ms`,
);

console.log(
  `throughput: ${Q} requests of ${TT} tokens (ignore_eos), ${C} clients vs 1${single ? `, ${W} workers vs 1 at ${C} clients` : ''}, ${values.rounds} rounds alternating`,
);
const rounds = [];
for (let k = 0; k < Number(values.rounds); k++) {
  const runs = [
    [main, C],
    [main, 1],
  ];
  if (single) runs.push([single, C]);
  for (const [server, clients] of runs) {
    const s0 = performance.now();
    const rs = await drive(Q, clients, (i) => complete(1000 + i, TT, { ignore_eos: true }, server.url));
    const s = (performance.now() - s0) / 1000;
    const tokens = rs.reduce((n, r) => n + r.tokens, 0);
    if (rs.some((r) => !r.ok) || tokens !== Q * TT) throw new Error(`throughput run lost requests (${tokens} of ${Q * TT} tokens)`);
    rounds.push({ workers: server.workers, clients, seconds: +s.toFixed(2), tokens_per_s: +(tokens / s).toFixed(1) });
    console.log(
      `  round ${k + 1}, ${server.workers} worker(s), ${clients} client(s): ${s.toFixed(2)} s, ${(tokens / s).toFixed(1)} tokens/s`,
    );
  }
}
const best = (workers, clients) =>
  Math.max(...rounds.filter((r) => r.workers === workers && r.clients === clients).map((r) => r.tokens_per_s));
const ratio = best(W, C) / best(W, 1);
console.log(`  ${C} clients / 1 client: ${ratio.toFixed(2)}x tokens/s (best rounds, ${W} worker(s))`);
const workersRatio = single ? best(W, C) / best(1, C) : null;
if (single) console.log(`  ${W} workers / 1 worker at ${C} clients: ${workersRatio.toFixed(2)}x tokens/s (best rounds)`);

const codes = [];
for (const { child } of [main, single].filter(Boolean)) {
  child.kill('SIGTERM');
  codes.push(await new Promise((resolve) => child.once('exit', resolve)));
}
const after = uptime();
console.log(`uptime after: ${after}`);
console.log(
  JSON.stringify(
    {
      model: values.model,
      backend: values.backend,
      batch_size: Number(values['batch-size']),
      workers: W,
      load: {
        clients: C,
        requests: load.length,
        lost: lost.length,
        max_tokens: T,
        tokens: loadTokens,
        seconds: +loadS.toFixed(2),
        p50_ms: +pct(lat, 0.5).toFixed(1),
        p99_ms: +pct(lat, 0.99).toFixed(1),
      },
      throughput: {
        requests: Q,
        tokens_each: TT,
        rounds,
        ratio: +ratio.toFixed(2),
        ...(single ? { workers_ratio: +workersRatio.toFixed(2) } : {}),
      },
      server_exit: codes[0],
      ...(single ? { single_server_exit: codes[1] } : {}),
      uptime_before: before,
      uptime_after: after,
    },
    null,
    2,
  ),
);
if (lost.length > 0) process.exitCode = 1;
