// What the vLLM PRM client (`vllmPrm` of @rlvr/verigate) costs a training step beside the server's
// own time, and what its concurrency cap buys: a batch of B completions (3 steps each) scored against
// a loopback server that speaks vLLM's pooling protocol and answers each request after a fixed
// delay (--delay ms, standing in for the GPU's time per request; a real PRM's time differs). Cases:
// concurrency 1 (the baseline), 4, 16. The ideal wall time is ceil(B / concurrency) x delay; the
// excess over it is the client's and the loopback's overhead.
//
//   npm run build && node tools/bench/verigate/prm-client.mjs [--b 64] [--delay 20] [--reps 5]
//
// Prints `uptime` before and after (the figures are loaded ones unless the machine was idle), then
// a JSON summary: median wall ms per batch over --reps after one warm-up, the ideal, and each
// case's speed-up over concurrency 1 in the same process.
import { execSync } from 'node:child_process';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { vllmPrm } from '@rlvr/verigate';

const { values } = parseArgs({ options: { b: { type: 'string' }, delay: { type: 'string' }, reps: { type: 'string' } } });
const B = Number(values.b ?? 64);
const delay = Number(values.delay ?? 20);
const reps = Number(values.reps ?? 5);
const uptime = () => execSync('uptime').toString().trim();
console.log(`uptime before: ${uptime()}`);

const server = createServer(async (req, res) => {
  let raw = '';
  for await (const c of req) raw += c;
  const { input } = JSON.parse(raw);
  const rows = input
    .split('<extra_0>')
    .slice(0, -1)
    .map(() => [0.3, 0.7]);
  setTimeout(() => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: [{ index: 0, object: 'pooling', data: rows }] }));
  }, delay);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}`;

const enc = new TextEncoder();
const completions = Array.from({ length: B }, (_, i) => ({
  question: `What is ${i} + ${i}?`,
  tokenBytes: [`Step 1: ${i} + ${i}`, ` = ${2 * i}.\n\n`, 'Step 2: so the answer', ` is ${2 * i}.\n\n`, `\\boxed{${2 * i}}`].map((t) =>
    enc.encode(t),
  ),
}));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = {};
for (const concurrency of [1, 4, 16]) {
  const scorer = vllmPrm({ url, model: 'prm', concurrency, timeoutMs: 60_000 });
  await scorer.score(completions); // warm-up (connections)
  const ms = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    const steps = await scorer.score(completions);
    ms.push(performance.now() - t0);
    if (steps.some((s) => s.length !== 3)) throw new Error('expected 3 steps per completion');
  }
  results[concurrency] = { wallMs: median(ms), idealMs: Math.ceil(B / concurrency) * delay };
}
server.close();
for (const r of Object.values(results)) r.speedupVsConcurrency1 = results[1].wallMs / r.wallMs;
console.log(JSON.stringify({ B, delayMs: delay, reps, results }, (_, v) => (typeof v === 'number' ? Number(v.toFixed(2)) : v), 2));
console.log(`uptime after: ${uptime()}`);
