// What each request shape of `httpSampler` (and so of `rlvr eval --endpoint`) costs against
// rlvr-serve on loopback (issue 18): bytes on the wire and wall time per request, through the real
// client. The server runs as its own process (the built bin, as users start it).
//
// Shapes (each one request per prompt asking for its n completions):
//   tokens            logprobs 0 + return_tokens_as_token_ids: the sampled ids and log-probs
//                     (what a rollout batch needs; what rlvr eval sent before: the baseline)
//   tokens+stream     the same as server-sent events
//   tokens+echo       the same, text prompt echoed back with its ids (RL without a local tokenizer)
//   text              no log-probs: text, finish reason, usage.completion_tokens (rlvr eval's default)
//   text+stream       the same as server-sent events (rlvr eval --stream)
//
// Every shape must give the same texts, finish reasons and token counts (checked; exit 1 if not).
// The shapes run one after the other in each round (--rounds, alternating), one request in flight,
// so the wall time per request is the server's decode plus what the shape adds.
//
//   npm run build && node tools/bench/rollout/request-shapes.mjs [--model DIR] [--backend wasm]
//        [--prompts 16] [--n 3] [--max-tokens 128] [--rounds 3]
//
// Generation runs to --max-tokens (min_tokens: EOS masked until then), as long reasoning traces do. Prints `uptime`
// before and after and a JSON summary; the figures of a shared machine move with its load.
import { execSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { httpSampler, plainChatTemplate, promptBuilder, syntheticGenerator } from '@rlvr/rollout';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: fileURLToPath(new URL('../../../packages/reference-trainer/assets/warmup', import.meta.url)) },
    backend: { type: 'string', default: 'wasm' },
    prompts: { type: 'string', default: '16' },
    n: { type: 'string', default: '3' },
    'max-tokens': { type: 'string', default: '128' },
    rounds: { type: 'string', default: '3' },
  },
});
const P = Number(values.prompts);
const N = Number(values.n);
const T = Number(values['max-tokens']);
const uptime = () => execSync('uptime').toString().trim();
const before = uptime();
console.log(`uptime before: ${before}`);

const bin = fileURLToPath(new URL('../../../packages/rollout/dist/serve-bin.js', import.meta.url));
const server = spawn(
  process.execPath,
  [bin, '--model', values.model, '--port', '0', '--backend', values.backend, '--served-model-name', 'bench', '--quiet'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const url = await new Promise((resolve, reject) => {
  createInterface({ input: server.stdout }).once('line', (line) => resolve(/on (http:\/\/\S+)/.exec(line)?.[1] ?? reject(new Error(line))));
  server.once('exit', (code) => reject(new Error(`rlvr-serve exited with ${code}`)));
});

// bytes and wall time of every fetch the sampler makes: request body out, response body in (as it streams)
let exchange = null;
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const x = { sent: Buffer.byteLength(init?.body ?? ''), received: 0, t0: performance.now(), ms: 0 };
  exchange?.push(x);
  const res = await realFetch(input, init);
  if (res.body === null) return res;
  const counted = res.body.pipeThrough(
    new TransformStream({
      transform(chunk, c) {
        x.received += chunk.length;
        c.enqueue(chunk);
      },
      flush() {
        x.ms = performance.now() - x.t0;
      },
    }),
  );
  return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
};

const gen = syntheticGenerator({ minSteps: 2, maxSteps: 3, digits: 2 });
const builder = promptBuilder({}, plainChatTemplate);
const requests = Array.from({ length: P }, (_, i) => ({
  prompt: { text: builder.text(gen.task(11, i).question) },
  n: N,
  params: { temperature: 0.6, topP: 0.95, topK: 20, maxNewTokens: T, stop: [], seed: 1000 + i },
}));
const SHAPES = {
  tokens: {},
  'tokens+stream': { stream: true },
  'tokens+echo': { echo: true },
  text: { returns: 'text' },
  'text+stream': { returns: 'text', stream: true },
};
const samplers = Object.fromEntries(
  Object.entries(SHAPES).map(([name, o]) => [
    name,
    httpSampler({ baseUrl: url, model: 'bench', concurrency: 1, maxRetries: 0, extraBody: { min_tokens: T }, ...o }),
  ]),
);

/** What every shape must agree on: per prompt, each completion's text and finish, and the tokens of all n. */
const summary = (out) =>
  out.map((r) => ({
    tokens: r.completionTokens ?? r.completions.reduce((a, c) => a + c.tokens.length, 0),
    completions: r.completions.map((c) => [c.finish, c.text]),
  }));

await samplers.text.sample(requests.slice(0, 1)); // warm-up
const runs = Object.fromEntries(Object.keys(SHAPES).map((k) => [k, []]));
let reference = null;
let mismatch = false;
for (let k = 0; k < Number(values.rounds); k++) {
  for (const name of Object.keys(SHAPES)) {
    exchange = [];
    const out = await samplers[name].sample(requests);
    const s = JSON.stringify(summary(out));
    if (out.some((r) => r.completions.some((c) => c.finish === 'error')))
      throw new Error(`${name}: a request failed: ${out.flatMap((r) => r.completions).find((c) => c.error)?.error}`);
    reference ??= s;
    if (s !== reference) {
      mismatch = true;
      console.log(`  ${name}: NOT the same completions as the first shape`);
    }
    runs[name].push(...exchange);
    exchange = null;
  }
  console.log(`  round ${k + 1} done`);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const tokensPerRequest = JSON.parse(reference).reduce((a, r) => a + r.tokens, 0) / P;
const rows = Object.entries(runs).map(([name, xs]) => ({
  shape: name,
  requests: xs.length,
  sent_bytes: Math.round(median(xs.map((x) => x.sent))),
  received_bytes: Math.round(median(xs.map((x) => x.received))),
  ms: +median(xs.map((x) => x.ms)).toFixed(1),
}));
const base = rows.find((r) => r.shape === 'tokens');
console.log(
  `\n${P} prompts x n=${N}, ${T} tokens each (${tokensPerRequest} completion tokens per request), ${values.rounds} rounds; medians per request`,
);
console.log('shape            sent B  received B  B/token  vs tokens    ms/request  vs tokens');
for (const r of rows) {
  const perToken = r.received_bytes / tokensPerRequest;
  console.log(
    `${r.shape.padEnd(15)} ${String(r.sent_bytes).padStart(7)} ${String(r.received_bytes).padStart(11)} ${perToken.toFixed(1).padStart(8)} ${(r.received_bytes / base.received_bytes).toFixed(2).padStart(9)}x ${r.ms.toFixed(1).padStart(13)} ${(r.ms / base.ms).toFixed(2).padStart(9)}x`,
  );
}
console.log(
  mismatch ? 'completions: DIFFER between shapes' : 'completions: identical texts, finish reasons and token counts in every shape',
);

server.kill('SIGTERM');
const code = await new Promise((resolve) => server.once('exit', resolve));
const after = uptime();
console.log(`uptime after: ${after}`);
console.log(
  JSON.stringify(
    {
      model: values.model,
      backend: values.backend,
      prompts: P,
      n: N,
      max_tokens: T,
      rounds: Number(values.rounds),
      tokens_per_request: tokensPerRequest,
      shapes: rows,
      identical: !mismatch,
      server_exit: code,
      uptime_before: before,
      uptime_after: after,
    },
    null,
    2,
  ),
);
if (mismatch) process.exitCode = 1;
