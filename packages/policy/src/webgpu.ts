import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as tf from '@tensorflow/tfjs-core';
import { adapterOf, softwareReason, startOnAdapter, startedAdapter, type GpuAdapter, type WebgpuAdapter } from './webgpu-device.js';

/**
 * tfjs's `webgpu` backend in Node, on Dawn through the optional peer dependency `webgpu`
 * (Dawn's Node bindings: a prebuilt `dawn.node`). Registered by hand: tfjs-backend-webgpu registers
 * itself only when `navigator.gpu` exists at import, and then asks for an adapter its own way.
 * Each thread (a policy worker included) starts its own Dawn instance and device: module state is
 * per thread, and a device belongs to the thread that made it.
 */

/** The npm package of Dawn's bindings; a variable, so that bundlers leave the optional peer alone. */
const DAWN_PACKAGE = 'webgpu';

/**
 * Dawn's instance of the started adapter. Held for the life of the process: it owns the native
 * instance under the device, and a collected one crashes the next kernel. (Dawn runs its event
 * loop only while a promise of it is pending, so holding it does not keep Node alive at exit.)
 */
const held = new Set<object>();

/** Dawn's backend for the platform's default instance. */
function nativeBackend(): string {
  return process.platform === 'darwin' ? 'metal' : process.platform === 'win32' ? 'd3d12' : 'vulkan';
}

const LIB_DIRS = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/usr/local/lib', '/lib64', '/lib'];
const ICD_DIRS = ['/usr/share/vulkan/icd.d', '/etc/vulkan/icd.d', '/usr/local/share/vulkan/icd.d'];

/** Whether the Vulkan loader is on this Linux machine (Dawn needs `libvulkan.so.1`). */
function vulkanLoader(): boolean {
  const dirs = [...(process.env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean), ...LIB_DIRS];
  return dirs.some((d) => existsSync(`${d}/libvulkan.so.1`));
}

/** The Vulkan drivers installed (`nvidia_icd.json`, `lvp_icd.x86_64.json`, ...). */
function vulkanDrivers(): string[] {
  const named = process.env.VK_DRIVER_FILES ?? process.env.VK_ICD_FILENAMES;
  if (named) return named.split(':').filter(Boolean);
  return ICD_DIRS.flatMap((d) => (existsSync(d) ? readdirSync(d).filter((f) => f.endsWith('.json')) : []));
}

interface Dawn {
  create(flags: string[]): { requestAdapter(options: object): Promise<GpuAdapter | null> };
  globals: object;
}

/** One way to ask Dawn for an adapter. */
interface Attempt {
  backend: string;
  flags: string[];
  request: { powerPreference?: string; featureLevel?: string };
}

/**
 * Start the webgpu backend on Dawn's native backend (Vulkan on Linux, Metal, D3D12; a
 * high-performance adapter; `DAWNNODE_BACKEND` overrides) and, unless `auto`, then on Linux on
 * OpenGL ES through EGL (a compatibility-level adapter; headless with `EGL_PLATFORM=surfaceless`,
 * set when unset: Mesa's llvmpipe on a machine without a GPU). `auto` refuses a software adapter,
 * and on Linux without a Vulkan loader does not load Dawn at all. Returns the adapter, or why
 * none started, in one line (`null`: the package is not installed, which `auto` passes over quietly).
 */
export async function startWebgpu(auto: boolean): Promise<WebgpuAdapter | string | null> {
  const started = startedAdapter();
  if (started !== null) {
    if (auto && started.software) return softwareReason(started);
    return (await tf.setBackend('webgpu')) ? started : 'the webgpu backend no longer starts';
  }
  try {
    createRequire(import.meta.url).resolve(DAWN_PACKAGE);
  } catch {
    return null;
  }
  const linux = process.platform === 'linux';
  const why: string[] = [];
  const attempts: Attempt[] = [];
  const native = process.env.DAWNNODE_BACKEND || nativeBackend();
  if (!linux || native !== 'vulkan' || vulkanLoader())
    attempts.push({ backend: native, flags: [], request: { powerPreference: 'high-performance' } });
  else why.push('no Vulkan loader (libvulkan.so.1: install libvulkan1 and the GPU driver)');
  if (linux && !auto) attempts.push({ backend: 'opengles', flags: ['backend=opengles'], request: { featureLevel: 'compatibility' } });
  if (attempts.length === 0) return `no WebGPU adapter: ${why.join('; ')}`;
  let dawn: Dawn;
  try {
    dawn = (await import(DAWN_PACKAGE)) as Dawn;
  } catch (e) {
    return `Dawn (the webgpu package) did not load: ${firstLine(e)}`;
  }
  if (linux) process.env.EGL_PLATFORM ??= 'surfaceless';
  for (const at of attempts) {
    let adapter: GpuAdapter | null = null;
    const gpu = dawn.create(at.flags);
    try {
      adapter = await gpu.requestAdapter(at.request);
    } catch (e) {
      why.push(`${at.backend}: ${firstLine(e)}`);
      continue;
    }
    if (adapter === null) {
      why.push(
        at.backend === 'vulkan'
          ? noVulkanAdapter()
          : `no ${at.backend} adapter${at.backend === 'opengles' ? ' (EGL with Mesa: libegl1, libgles2, libgl1-mesa-dri)' : ''}`,
      );
      continue;
    }
    const a = adapterOf(adapter, at.backend);
    if (auto && a.software) return softwareReason(a);
    Object.assign(globalThis, dawn.globals); // GPUBufferUsage, GPUMapMode, ... that the kernels read
    held.add(gpu);
    const failed = await startOnAdapter(adapter, a);
    return failed ?? a;
  }
  return `no WebGPU adapter: ${why.join('; ')}`;
}

function noVulkanAdapter(): string {
  const drivers = vulkanDrivers();
  return drivers.length === 0
    ? 'Vulkan finds no driver (no ICD file: an NVIDIA GPU needs nvidia_icd.json from its driver)'
    : `Vulkan finds no adapter Dawn accepts (drivers: ${drivers.join(', ')})`;
}

function firstLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split('\n')[0]!;
}
