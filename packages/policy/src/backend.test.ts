import { afterEach, describe, expect, it, vi } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { MathBackendCPU } from '@tensorflow/tfjs-backend-cpu';
import { BACKEND_ENV, selectBackend } from './backend.js';

describe('selectBackend', () => {
  const saved = process.env[BACKEND_ENV];
  afterEach(() => {
    if (saved === undefined) delete process.env[BACKEND_ENV];
    else process.env[BACKEND_ENV] = saved;
  });

  it('auto falls back past the absent tfjs-node and a machine without a GPU to wasm, and logs one line saying why webgpu was passed over', async () => {
    delete process.env[BACKEND_ENV];
    const lines: string[] = [];
    expect(await selectBackend({}, { info: (m) => lines.push(m) })).toBe('wasm');
    expect(lines).toHaveLength(1);
    // the webgpu package is a dev dependency: here (no GPU) auto says why it passed it over
    expect(lines[0]).toMatch(
      /^tfjs backend: wasm \(@tensorflow\/tfjs-backend-wasm, auto; webgpu passed over: (no WebGPU adapter: |only a software adapter )[^;]+\)$/,
    );
    expect(tf.getBackend()).toBe('wasm');
  });

  it('the environment variable overrides auto, an explicit option overrides both', async () => {
    process.env[BACKEND_ENV] = 'cpu';
    const lines: string[] = [];
    expect(await selectBackend({}, { info: (m) => lines.push(m) })).toBe('cpu');
    expect(lines[0]).toBe(`tfjs backend: cpu (@tensorflow/tfjs-backend-cpu, from ${BACKEND_ENV})`);
    expect(await selectBackend({ backend: 'wasm' })).toBe('wasm');
    process.env[BACKEND_ENV] = 'gpu';
    await expect(selectBackend({})).rejects.toThrow(`${BACKEND_ENV}=gpu is not a backend (allowed: auto, tensorflow, webgpu, wasm, cpu)`);
  });

  it('the cpu backend prints no "use tfjs-node" banner once a backend is selected (the choice goes to the logger only)', async () => {
    const lines: string[] = [];
    await selectBackend({ backend: 'cpu' }, { info: (m) => lines.push(m) });
    expect(lines).toHaveLength(1);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const firstUse = () => new MathBackendCPU().write(new Float32Array(1), [1], 'float32'); // a fresh backend's first write
      firstUse();
      expect(warn).not.toHaveBeenCalled();
      // what selectBackend prevents: tfjs's banner on the first write of a cpu backend in Node
      tf.env().set('PROD', false);
      firstUse();
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('looks like you are running TensorFlow.js in Node.js'));
    } finally {
      tf.env().set('PROD', true);
      warn.mockRestore();
    }
  });

  it('an explicit tensorflow backend that is not installed is an error naming the packages', async () => {
    await expect(selectBackend({ backend: 'tensorflow' })).rejects.toThrow(
      /backend tensorflow is not available: not installed \(install @tensorflow\/tfjs-node or @tensorflow\/tfjs-node-gpu\)/,
    );
  });
});
