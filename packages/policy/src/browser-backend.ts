import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { init } from 'tiktoken/init';
import { PolicyError } from './errors.js';
import { adapterOf, describeAdapter, startOnAdapter, type GpuAdapter } from './webgpu-device.js';
import type { Logger } from './backend.js';

/**
 * The backends of a page, fastest first: tfjs's `webgpu` on the page's own adapter (`navigator.gpu`),
 * else `cpu` (plain JavaScript). The wasm backend would need its .wasm files served beside the page:
 * not offered here.
 */
export const BROWSER_BACKENDS = ['webgpu', 'cpu'] as const;
export type BrowserBackendName = (typeof BROWSER_BACKENDS)[number];

/** What `selectBrowserBackend` started, and why `webgpu` did not when it fell back. */
export interface BrowserBackend {
  name: BrowserBackendName;
  /** one line for the page: the backend and, for webgpu, the adapter */
  line: string;
  /** why webgpu did not start (`auto` only), or null */
  webgpuUnavailable: string | null;
}

/** The page's WebGPU adapter, or why there is none, in one line. */
async function startPageWebgpu(): Promise<string | GpuAdapter> {
  const gpu = (globalThis as { navigator?: { gpu?: { requestAdapter(o?: object): Promise<GpuAdapter | null> } } }).navigator?.gpu;
  if (gpu === undefined) return 'this browser has no WebGPU (navigator.gpu is undefined)';
  let adapter: GpuAdapter | null;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  } catch (e) {
    return `requestAdapter failed: ${String((e as Error)?.message ?? e).split('\n')[0]}`;
  }
  return adapter ?? 'navigator.gpu gave no adapter (WebGPU disabled, or no usable GPU)';
}

/**
 * Start a tfjs backend in a browser: `webgpu` (any adapter the page gets, software ones labelled as
 * such), else `cpu`. `auto` (the default) falls back to cpu, saying why webgpu did not start; an
 * explicit name fails with `PolicyError('backend_unavailable')` instead. Logs one line.
 */
export async function selectBrowserBackend(
  options: { backend?: 'auto' | BrowserBackendName } = {},
  logger?: Logger,
): Promise<BrowserBackend> {
  const requested = options.backend ?? 'auto';
  tf.env().set('PROD', true);
  let webgpuUnavailable: string | null = null;
  if (requested !== 'cpu') {
    const found = await startPageWebgpu();
    if (typeof found !== 'string') {
      const a = adapterOf(found, 'navigator.gpu');
      const failed = await startOnAdapter(found, a);
      if (failed === null) {
        await tf.ready();
        const line = `tfjs backend: webgpu (@tensorflow/tfjs-backend-webgpu, ${describeAdapter(a)})`;
        logger?.info(line);
        return { name: 'webgpu', line, webgpuUnavailable: null };
      }
      webgpuUnavailable = failed;
    } else webgpuUnavailable = found;
    if (requested === 'webgpu') throw new PolicyError('backend_unavailable', `backend webgpu is not available: ${webgpuUnavailable}`);
  }
  if (!(await tf.setBackend('cpu'))) throw new PolicyError('backend_unavailable', 'backend cpu did not start');
  await tf.ready();
  const line = `tfjs backend: cpu (@tensorflow/tfjs-backend-cpu${webgpuUnavailable === null ? '' : `; no webgpu: ${webgpuUnavailable}`})`;
  logger?.info(line);
  return { name: 'cpu', line, webgpuUnavailable };
}

/**
 * Make tiktoken's encoder usable in a browser: instantiate its wasm (`tiktoken/tiktoken_bg.wasm` of the
 * `tiktoken` package, fetched by the page) before building a tokenizer. In Node the package loads it itself.
 */
export async function initTokenizerWasm(wasm: ArrayBuffer | Uint8Array): Promise<void> {
  // WebAssembly's types come with the DOM library, which this package does not compile against
  const { WebAssembly: wasmApi } = globalThis as unknown as {
    WebAssembly: { instantiate(b: ArrayBuffer | Uint8Array, i: object): Promise<never> };
  };
  await init((imports) => wasmApi.instantiate(wasm, imports));
}
