import * as tf from '@tensorflow/tfjs-core';
import { PolicyError } from './errors.js';

/**
 * tfjs's `webgpu` backend on a WebGPU adapter that the caller found: Dawn's in Node (`webgpu.ts`), a
 * page's `navigator.gpu` in a browser (`browser-backend.ts`). Nothing of Node here: a browser bundle
 * takes this module. The backend is registered by hand, with the adapter's own limits.
 */

/** Adapters that are CPU rasterisers: slower than the wasm backend, so `auto` passes over them. */
const SOFTWARE = /llvmpipe|lavapipe|softpipe|swiftshader/i;

/** What is known of the adapter in use (the log line, the buffer-limit check). */
export interface WebgpuAdapter {
  /** Dawn's backend (vulkan, metal, d3d12, opengles), or `navigator.gpu` for a page's adapter */
  backend: string;
  vendor: string;
  architecture: string;
  /** the device name, else the driver's description */
  device: string;
  software: boolean;
  /** the device's largest storage-buffer binding, bytes: the largest tensor it can hold */
  maxBinding: number;
}

let started: WebgpuAdapter | null = null;

/** `started`, in one line: `adapter llvmpipe (vendor -, architecture -, backend opengles; software)`. */
export function describeAdapter(a: WebgpuAdapter): string {
  return `adapter ${a.device} (vendor ${a.vendor || '-'}, architecture ${a.architecture || '-'}, backend ${a.backend}${a.software ? '; software' : ''})`;
}

/** The adapter of the running webgpu backend, or null when tfjs runs on another backend. */
export function webgpuAdapter(): WebgpuAdapter | null {
  return started !== null && tf.getBackend() === 'webgpu' ? started : null;
}

/** The adapter started before in this thread (whichever backend runs now), or null. */
export function startedAdapter(): WebgpuAdapter | null {
  return started !== null && tf.findBackend('webgpu') ? started : null;
}

/**
 * Refuse a tensor the webgpu device cannot bind (an embedding table larger than the adapter's
 * `maxStorageBufferBindingSize`), naming it and the limit, before tfjs fails deep in a kernel.
 */
export function checkBufferLimit(tensor: string, elements: number): void {
  const a = webgpuAdapter();
  if (a === null || elements * 4 <= a.maxBinding) return;
  throw new PolicyError(
    'backend_unavailable',
    `backend webgpu cannot hold ${tensor}: ${elements * 4} bytes, over the ${describeAdapter(a)}'s storage-buffer limit of ${a.maxBinding} bytes`,
    { tensor },
  );
}

/** The little of WebGPU's types used here (the full ones, `@webgpu/types`, come with the optional peer only). */
interface GpuAdapterInfo {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  isFallbackAdapter?: boolean;
}
type Limits = Record<
  | 'maxComputeWorkgroupStorageSize'
  | 'maxComputeWorkgroupsPerDimension'
  | 'maxStorageBufferBindingSize'
  | 'maxBufferSize'
  | 'maxComputeWorkgroupSizeX'
  | 'maxComputeInvocationsPerWorkgroup'
  | 'maxStorageBuffersPerShaderStage',
  number
>;
export interface GpuAdapter {
  info: GpuAdapterInfo;
  limits: Limits;
  requestDevice(descriptor: { requiredLimits: Limits }): Promise<unknown>;
}

/** What is known of `adapter`, found on `backend`. */
export function adapterOf(adapter: GpuAdapter, backend: string): WebgpuAdapter {
  const info = adapter.info;
  return {
    backend,
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device || info.description || 'unnamed',
    software: info.isFallbackAdapter === true || SOFTWARE.test(`${info.vendor} ${info.architecture} ${info.device} ${info.description}`),
    maxBinding: adapter.limits.maxStorageBufferBindingSize,
  };
}

export function softwareReason(a: WebgpuAdapter): string {
  return `only a software ${describeAdapter(a)}, slower than wasm (--backend webgpu takes it)`;
}

/**
 * Start tfjs's webgpu backend on `adapter` (described by `a`): its device with the adapter's own
 * limits, tfjs's backend class with a check of the device's errors. Returns why it did not start, or null.
 */
export async function startOnAdapter(adapter: GpuAdapter, a: WebgpuAdapter): Promise<string | null> {
  await register(adapter, adapter.info);
  if (!(await tf.setBackend('webgpu'))) return `${describeAdapter(a)} gave no device`;
  started = a;
  return null;
}

/** tfjs's own factory, with our adapter: the limits it asks for, then `navigator.gpu` for its constructor's check. */
async function register(adapter: GpuAdapter, info: GpuAdapterInfo): Promise<void> {
  const l = adapter.limits;
  const device = await adapter.requestDevice({
    requiredLimits: {
      maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
      maxComputeWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension,
      maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
      maxBufferSize: l.maxBufferSize,
      maxComputeWorkgroupSizeX: l.maxComputeWorkgroupSizeX,
      maxComputeInvocationsPerWorkgroup: l.maxComputeInvocationsPerWorkgroup,
      // tfjs binds every input of some kernels (AddN, Concat) to one shader: as many as the adapter allows
      maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
    },
  });
  const g = globalThis as { navigator?: { gpu?: unknown } };
  if (g.navigator === undefined) Object.defineProperty(globalThis, 'navigator', { value: {}, configurable: true, writable: true });
  if (g.navigator!.gpu === undefined)
    Object.defineProperty(g.navigator, 'gpu', { value: { requestAdapter: () => Promise.resolve(adapter) }, configurable: true });
  // A kernel the device refuses (a validation error) is only printed by Dawn, and tfjs reads on
  // with wrong numbers: the first such error fails every later read instead, saying what it was.
  let refused: string | null = null;
  (device as EventTarget).addEventListener('uncapturederror', (ev) => {
    refused ??= String((ev as Event & { error?: { message?: string } }).error?.message).split('\n')[0]!;
  });
  const { WebGPUBackend } = await import('@tensorflow/tfjs-backend-webgpu');
  class CheckedBackend extends WebGPUBackend {
    override async read(dataId: object): Promise<tf.BackendValues> {
      const values = await super.read(dataId as never);
      if (refused !== null)
        throw new PolicyError('backend_unavailable', `the webgpu device refused a kernel, so its results are wrong: ${refused}`);
      return values;
    }
  }
  if (tf.findBackendFactory('webgpu')) tf.removeBackend('webgpu');
  tf.registerBackend('webgpu', () => new CheckedBackend(device as never, info as never), 0);
}
