/**
 * The page: fetch the embedded checkpoint and the tokenizer's files, start the page's WebGPU adapter
 * (else the cpu backend, said in one line), run `grailStep` and show the GRAIL weight of every
 * completion token as a heatmap. `?backend=cpu|webgpu` picks the backend (default: webgpu, else cpu).
 * The results are also left on `window.rlvrResult` for the headless-Chromium test to read.
 */
import {
  ChatTemplate,
  initTokenizerWasm,
  loadModelBytes,
  parsePrunedVocab,
  parseRanks,
  prunedTokenizer,
  selectBrowserBackend,
  type BrowserBackendName,
} from '@rlvr/policy';
import { grailStep, type GrailStepResult, type PageTask } from '../src/grail-step.js';

declare global {
  interface Window {
    rlvrResult?: { status: 'done'; backend: BrowserBackendName; backendLine: string; webgpuUnavailable: string | null } & GrailStepResult;
    rlvrError?: string;
  }
}

const $ = (id: string): HTMLElement => document.getElementById(id)!;

async function fetchOk(url: string): Promise<Response> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`GET ${url}: HTTP ${r.status}`);
  return r;
}
const bytes = async (url: string) => new Uint8Array(await (await fetchOk(url)).arrayBuffer());
const json = async (url: string): Promise<unknown> => (await fetchOk(url)).json();

/** Blue below 1, white at 1, red above 1 (as `@rlvr/report`'s heatmaps). */
function colour(w: number, lo: number, hi: number): string {
  const [t, rgb] = w >= 1 ? [hi > 1 ? (w - 1) / (hi - 1) : 0, [200, 40, 30]] : [lo < 1 ? (1 - w) / (1 - lo) : 0, [43, 108, 176]];
  const c = rgb.map((v) => Math.round(255 + (v - 255) * Math.min(1, t) * 0.85));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

function heatmap(r: GrailStepResult): void {
  const lo = Math.min(1, ...r.weights);
  const hi = Math.max(1, ...r.weights);
  const root = $('heatmap');
  let t = 0;
  r.rollouts.forEach((rollout, i) => {
    const row = document.createElement('div');
    row.className = `completion ${rollout.correct ? 'correct' : 'wrong'}`;
    const label = document.createElement('b');
    label.textContent = `rollout ${i} (${rollout.correct ? 'correct' : 'wrong'}): `;
    row.append(label);
    for (const text of rollout.tokens) {
      const w = r.weights[t]!;
      const cell = document.createElement('span');
      cell.className = 'tok';
      cell.textContent = text;
      cell.title = `weight ${w.toFixed(4)}, log-prob ${r.logprobs[t]!.toFixed(4)}`;
      cell.dataset.weight = String(w);
      cell.style.background = colour(w, lo, hi);
      row.append(cell);
      t++;
    }
    root.append(row);
  });
}

async function main(): Promise<void> {
  const requested = new URLSearchParams(location.search).get('backend') ?? 'auto';
  if (requested !== 'auto' && requested !== 'webgpu' && requested !== 'cpu') throw new Error(`?backend=${requested}: use webgpu or cpu`);
  const backend = await selectBrowserBackend({ backend: requested });
  $('backend').textContent = backend.line;
  if (backend.webgpuUnavailable !== null)
    $('nowebgpu').textContent = `No WebGPU here: ${backend.webgpuUnavailable}. Running on the cpu backend.`;
  const [config, weights, vocab, tokenizerConfig, encoder, wasm, tasks] = await Promise.all([
    json('checkpoint/config.json'),
    bytes('checkpoint/model.safetensors'),
    json('checkpoint/tokenizer.pruned.json'),
    json('checkpoint/tokenizer_config.json'),
    json('tiktoken/cl100k_base.json'),
    bytes('tiktoken/tiktoken_bg.wasm'),
    json('tasks.json'),
  ]);
  await initTokenizerWasm(wasm);
  const pruned = parsePrunedVocab(vocab, 'checkpoint/tokenizer.pruned.json');
  const tokenizer = prunedTokenizer(pruned, parseRanks(encoder as { pat_str: string; bpe_ranks: string }));
  const template = ChatTemplate.fromConfig(tokenizerConfig, 'checkpoint/tokenizer_config.json');
  const model = loadModelBytes(config, weights, { files: { config: 'checkpoint/config.json', weights: 'checkpoint/model.safetensors' } });
  const r = await grailStep(model, tokenizer, template.apply, tasks as PageTask[]);
  heatmap(r);
  $('summary').textContent =
    `${r.rollouts.length} completions, ${r.weights.length} tokens; update: loss ${r.loss.toFixed(6)}, largest parameter change ${r.maxParamChange.toExponential(3)}`;
  window.rlvrResult = {
    status: 'done',
    backend: backend.name,
    backendLine: backend.line,
    webgpuUnavailable: backend.webgpuUnavailable,
    ...r,
  };
}

main().catch((e: unknown) => {
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  $('summary').textContent = `failed: ${message}`;
  window.rlvrError = message;
});
