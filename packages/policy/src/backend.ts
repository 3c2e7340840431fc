import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { z } from 'zod';
import { PolicyError } from './errors.js';

/**
 * The tfjs backends we use, fastest first. `tensorflow` is libtensorflow through the optional
 * peer dependencies `@tensorflow/tfjs-node-gpu` / `@tensorflow/tfjs-node` (not installed by
 * default: their install downloads a native binary).
 */
export const BACKEND_NAMES = ['tensorflow', 'wasm', 'cpu'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

/** Environment variable that picks the backend when no explicit option is given. */
export const BACKEND_ENV = 'RLVR_TFJS_BACKEND';

export const BackendOptionsSchema = z.object({
  /** `auto` tries tensorflow, then wasm, then cpu. An explicit name fails if that backend cannot start. */
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

async function start(name: BackendName): Promise<string | null> {
  if (name === 'tensorflow') {
    const pkg = await tryTensorflow();
    if (!pkg) return null;
    return (await tf.setBackend('tensorflow')) ? pkg : null;
  }
  if (name === 'wasm') prepareWasm();
  return (await tf.setBackend(name)) ? `@tensorflow/tfjs-backend-${name}` : null;
}

/**
 * Choose and start the tfjs backend, once per process (it is global tfjs state).
 * Order of precedence: `options.backend` if not `auto`, else `$RLVR_TFJS_BACKEND`, else the first
 * of tensorflow, wasm, cpu that starts. Logs one line naming the backend.
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
  for (const name of candidates) {
    let pkg: string | null = null;
    try {
      pkg = await start(name);
    } catch (cause) {
      if (requested !== 'auto')
        throw new PolicyError('backend_unavailable', `backend ${name} failed to start: ${(cause as Error).message}`, {}, { cause });
    }
    if (pkg) {
      await tf.ready();
      logger?.info(`tfjs backend: ${name} (${pkg}${requested === 'auto' ? ', auto' : `, from ${source}`})`);
      return name;
    }
    if (requested !== 'auto') {
      const hint = name === 'tensorflow' ? ' (install @tensorflow/tfjs-node or @tensorflow/tfjs-node-gpu)' : '';
      throw new PolicyError('backend_unavailable', `backend ${name} is not available${hint}`);
    }
  }
  throw new PolicyError('backend_unavailable', 'no tfjs backend could start');
}
