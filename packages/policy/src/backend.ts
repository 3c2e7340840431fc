import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { z } from 'zod';
import { PolicyError } from './errors.js';
import { startWebgpu } from './webgpu.js';
import { describeAdapter } from './webgpu-device.js';

/**
 * The tfjs backends we use, fastest first. `tensorflow` is libtensorflow through the optional
 * peer dependencies `@tensorflow/tfjs-node-gpu` / `@tensorflow/tfjs-node` (not installed by
 * default: their install downloads a native binary); `webgpu` is tfjs's WebGPU backend on Dawn
 * through the optional peer `webgpu` (`npm i webgpu`; see `webgpu.ts`).
 */
export const BACKEND_NAMES = ['tensorflow', 'webgpu', 'wasm', 'cpu'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

/** Environment variable that picks the backend when no explicit option is given. */
export const BACKEND_ENV = 'RLVR_TFJS_BACKEND';

export const BackendOptionsSchema = z.object({
  /**
   * `auto` tries tensorflow, then webgpu on a hardware adapter, then wasm, then cpu. An explicit
   * name fails if that backend cannot start (`webgpu` then takes a software adapter too).
   */
  backend: z.enum(['auto', ...BACKEND_NAMES]).default('auto'),
});
export type BackendOptions = z.input<typeof BackendOptionsSchema>;

/** Where library code reports what it did; the CLI passes one that prints. */
export interface Logger {
  info(message: string): void;
  warn?(message: string): void;
}

async function tryTensorflow(): Promise<string | null> {
  for (const pkg of ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node']) {
    try {
      // A variable specifier: these optional peers are usually absent, and must not be bundled.
      await import(pkg);
      if (tf.findBackendFactory('tensorflow')) return pkg;
    } catch {
      // not installed or failed to load its native binary: try the next one
    }
  }
  return null;
}

let wasmReady = false;
function prepareWasm(): void {
  if (wasmReady) return;
  // In Node the .wasm binaries are read from the package's dist folder.
  const require = createRequire(import.meta.url);
  const dir = dirname(require.resolve('@tensorflow/tfjs-backend-wasm'));
  setWasmPaths(dir + '/');
  wasmReady = true;
}

/** Start `name`: the package (and adapter) it runs on for the log line, or why it cannot start. */
async function start(name: BackendName, auto: boolean): Promise<string | { reason: string; quiet?: boolean }> {
  if (name === 'webgpu') {
    const a = await startWebgpu(auto);
    if (a === null) return { reason: 'the webgpu package (Dawn) is not installed: npm i webgpu', quiet: true };
    return typeof a === 'string' ? { reason: a } : `@tensorflow/tfjs-backend-webgpu on Dawn, ${describeAdapter(a)}`;
  }
  if (name === 'tensorflow') {
    const pkg = await tryTensorflow();
    if (!pkg) return { reason: 'not installed (install @tensorflow/tfjs-node or @tensorflow/tfjs-node-gpu)' };
    return (await tf.setBackend('tensorflow')) ? pkg : { reason: 'did not start' };
  }
  if (name === 'wasm') prepareWasm();
  return (await tf.setBackend(name)) ? `@tensorflow/tfjs-backend-${name}` : { reason: 'did not start' };
}

/**
 * Choose and start the tfjs backend, once per process (it is global tfjs state).
 * Order of precedence: `options.backend` if not `auto`, else `$RLVR_TFJS_BACKEND`, else the first
 * of tensorflow, webgpu (a hardware adapter only), wasm, cpu that starts. Logs one line naming the
 * backend (and the adapter, for webgpu); one that cannot start says which and why in one line.
 */
export async function selectBackend(options: BackendOptions = {}, logger?: Logger): Promise<BackendName> {
  const opts = BackendOptionsSchema.parse(options);
  let requested: BackendName | 'auto' = opts.backend;
  let source = 'option';
  if (requested === 'auto') {
    const env = process.env[BACKEND_ENV];
    if (env !== undefined && env !== '' && env !== 'auto') {
      if (!(BACKEND_NAMES as readonly string[]).includes(env)) {
        throw new PolicyError('backend_unavailable', `${BACKEND_ENV}=${env} is not a backend (allowed: auto, ${BACKEND_NAMES.join(', ')})`);
      }
      requested = env as BackendName;
      source = BACKEND_ENV;
    }
  }
  // tfjs prints a "use tfjs-node" banner on first use of cpu unless PROD is set; library code never prints.
  tf.env().set('PROD', true);
  const candidates: BackendName[] = requested === 'auto' ? [...BACKEND_NAMES] : [requested];
  const passed: string[] = []; // why auto passed over an installed backend, for the log line
  for (const name of candidates) {
    let pkg: string | { reason: string; quiet?: boolean };
    try {
      pkg = await start(name, requested === 'auto');
    } catch (cause) {
      if (requested !== 'auto')
        throw new PolicyError('backend_unavailable', `backend ${name} failed to start: ${(cause as Error).message}`, {}, { cause });
      continue;
    }
    if (typeof pkg === 'string') {
      await tf.ready();
      logger?.info(
        `tfjs backend: ${name} (${pkg}${requested === 'auto' ? ', auto' : `, from ${source}`}${passed.map((p) => `; ${p}`).join('')})`,
      );
      return name;
    }
    if (requested !== 'auto') throw new PolicyError('backend_unavailable', `backend ${name} is not available: ${pkg.reason}`);
    if (name === 'webgpu' && !pkg.quiet) passed.push(`webgpu passed over: ${pkg.reason}`);
  }
  throw new PolicyError('backend_unavailable', 'no tfjs backend could start');
}
