import { spawn, spawnSync } from 'node:child_process';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChatTemplate, loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import { BOXED_INSTRUCTION } from '@rlvr/rollout';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
// @ts-expect-error: plain ESM scripts of this folder, no declarations
import { buildPage } from '../build.mjs';
// @ts-expect-error: plain ESM scripts of this folder, no declarations
import { servePage } from '../serve.mjs';
import { INSTRUCTION, grailStep, type GrailStepResult, type PageTask } from './grail-step.js';

// The page in a real headless Chromium (Debian's `chromium`; CI installs it in .ci/run), served with the
// embedded checkpoint by a real loopback HTTP server; page-check.mjs drives it over the DevTools protocol.
// The reference is the same computation in Node on the cpu backend, from the checkpoint directory through
// the Node entries (loadModel, loadTokenizer: the files read by Node, tiktoken's own wasm).
const CHECK = fileURLToPath(new URL('../page-check.mjs', import.meta.url));
const CHECKPOINT = fileURLToPath(new URL('../../../packages/reference-trainer/assets/warmup', import.meta.url));
const hasChromium = spawnSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).status === 0;
if (!hasChromium) console.warn('[skipped] browser.chromium.test.ts: `chromium` is not on PATH (apt-get install chromium)');

/** Chromium's WebGPU on this GPU-less machine: its own SwiftShader (Vulkan on the CPU), which Debian's package ships. */
const WEBGPU_FLAGS = ['--enable-unsafe-webgpu'];

interface PageCheck {
  ok: boolean;
  error?: string;
  result: ({ backend: string; backendLine: string; webgpuUnavailable: string | null } & GrailStepResult) | null;
  pageError: string | null;
  cells: number;
  noWebgpuLine: string;
  consoleErrors: string[];
  exceptions: string[];
}

function check(url: string, flags: string[]): Promise<PageCheck> {
  // Node 20 has WebSocket behind a flag; Node 22 has it by default.
  const node = typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'undefined' ? ['--experimental-websocket'] : [];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...node, CHECK, url, ...flags], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', () => {
      try {
        resolve(JSON.parse(out) as PageCheck);
      } catch {
        reject(new Error(`page-check printed no result; stderr: ${err.slice(-1000)}`));
      }
    });
  });
}

const maxAbsDiff = (a: readonly number[], b: readonly number[]): number => {
  expect(a.length).toBe(b.length);
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);
};

let dir: string;
let server: Server;
let base: string;
let inputs: string[];
let reference: GrailStepResult;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rlvr-browser-page-'));
  ({ inputs } = (await buildPage(join(dir, 'page'))) as { inputs: string[] });
  if (!hasChromium) return;
  ({ server, url: base } = (await servePage(join(dir, 'page'))) as { server: Server; url: string });
  await selectBackend({ backend: 'cpu' });
  const tasks = JSON.parse(await readFile(join(dir, 'page/tasks.json'), 'utf8')) as PageTask[];
  const model = loadModel(CHECKPOINT);
  const tokenizer = loadTokenizer(CHECKPOINT);
  try {
    reference = await grailStep(model, tokenizer, ChatTemplate.fromTokenizerConfig(join(CHECKPOINT, 'tokenizer_config.json')).apply, tasks);
  } finally {
    model.dispose();
    tokenizer.free();
  }
}, 600_000);

afterAll(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** What both runs of the page must show, whatever the backend: the reference's tokens, one cell each, an update. */
function expectPage(r: PageCheck): NonNullable<PageCheck['result']> {
  expect(r.error).toBeUndefined();
  expect(r.pageError).toBeNull();
  expect(r.exceptions).toEqual([]);
  expect(r.consoleErrors).toEqual([]);
  const res = r.result!;
  expect(res.rollouts).toEqual(reference.rollouts);
  const tokens = res.rollouts.reduce((n, x) => n + x.tokens.length, 0);
  expect(r.cells).toBe(tokens);
  expect(res.weights).toHaveLength(tokens);
  expect(Number.isFinite(res.loss)).toBe(true);
  expect(res.maxParamChange).toBeGreaterThan(0);
  return res;
}

test('the page bundles the browser entries of the packages (and no node: module: esbuild would fail)', () => {
  for (const pkg of ['core', 'policy', 'saliency', 'advantages', 'trainer'])
    expect(
      inputs.some((f) => f.endsWith(`packages/${pkg}/dist/browser.js`)),
      pkg,
    ).toBe(true);
  expect(inputs.filter((f) => /packages\/[a-z-]+\/dist\/index\.js$/.test(f))).toEqual([]);
  expect(INSTRUCTION).toBe(BOXED_INSTRUCTION);
});

describe.skipIf(!hasChromium)('the page in headless Chromium', () => {
  test('without WebGPU: one line says so, and the cpu backend agrees with Node on the cpu backend', { timeout: 600_000 }, async () => {
    const r = await check(base, ['--disable-gpu']);
    const res = expectPage(r);
    expect(res.backend).toBe('cpu');
    expect(r.noWebgpuLine).toMatch(/^No WebGPU here: .+\. Running on the cpu backend\.$/);
    expect(r.noWebgpuLine.split('\n')).toHaveLength(1);
    console.info(
      `cpu backend in headless Chromium: max |difference| from Node's cpu backend: log-probs ${maxAbsDiff(res.logprobs, reference.logprobs).toExponential(2)}, weights ${maxAbsDiff(res.weights, reference.weights).toExponential(2)}, loss ${Math.abs(res.loss - reference.loss).toExponential(2)}`,
    );
    // the same JavaScript kernels in V8, Node's and Chromium's: agreement to float32 rounding
    expect(maxAbsDiff(res.logprobs, reference.logprobs)).toBeLessThanOrEqual(1e-6);
    expect(maxAbsDiff(res.weights, reference.weights)).toBeLessThanOrEqual(1e-5);
    expect(Math.abs(res.loss - reference.loss)).toBeLessThanOrEqual(1e-7);
    expect(Math.abs(res.maxParamChange - reference.maxParamChange)).toBeLessThanOrEqual(1e-9);
  });

  test("on the page's WebGPU adapter: agrees with Node on the cpu backend", { timeout: 600_000 }, async (ctx) => {
    const r = await check(base, WEBGPU_FLAGS);
    if (r.result?.backend === 'cpu' || /webgpu is not available/.test(r.pageError ?? '')) {
      console.warn(`[skipped] WebGPU in headless Chromium: ${r.result?.webgpuUnavailable ?? r.pageError}`);
      ctx.skip();
    }
    const res = expectPage(r);
    expect(res.backend).toBe('webgpu');
    expect(res.backendLine).toMatch(/^tfjs backend: webgpu \(@tensorflow\/tfjs-backend-webgpu, adapter .+\)$/);
    console.info(
      `webgpu in headless Chromium (${res.backendLine}): max |difference| from Node's cpu backend: log-probs ${maxAbsDiff(res.logprobs, reference.logprobs).toExponential(2)}, weights ${maxAbsDiff(res.weights, reference.weights).toExponential(2)}, loss ${Math.abs(res.loss - reference.loss).toExponential(2)}`,
    );
    // Measured on Debian's Chromium 150 over SwiftShader: log-probs 1.9e-6, weights 2.5e-6, loss 8.1e-8.
    expect(maxAbsDiff(res.logprobs, reference.logprobs)).toBeLessThanOrEqual(1e-5);
    expect(maxAbsDiff(res.weights, reference.weights)).toBeLessThanOrEqual(1e-5);
    expect(Math.abs(res.loss - reference.loss)).toBeLessThanOrEqual(1e-6);
  });
});
