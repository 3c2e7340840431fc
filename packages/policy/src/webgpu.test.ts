import { describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from './backend.js';
import { parseModelConfig } from './config.js';
import { Qwen3Model } from './model.js';
import type { HostTensor } from './safetensors-format.js';
import { checkBufferLimit, webgpuAdapter } from './webgpu-device.js';
import { webgpuSkip } from './test-utils/webgpu.js';

// Dawn's webgpu backend, on whatever adapter this machine has: Mesa's llvmpipe through OpenGL ES
// in CI (see .ci/run). Where none starts, the tests are skipped and their names say why.
const skip = await webgpuSkip();

describe('the webgpu backend', () => {
  it.skipIf(skip !== null)(
    `starts on request, naming the adapter (vendor, architecture, backend) in its one line${skip ?? ''}`,
    async () => {
      const lines: string[] = [];
      expect(await selectBackend({ backend: 'webgpu' }, { info: (m) => lines.push(m) })).toBe('webgpu');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^tfjs backend: webgpu \(@tensorflow\/tfjs-backend-webgpu on Dawn, adapter \S.* \(vendor \S+, architecture \S+, backend (vulkan|metal|d3d12|opengles)(; software)?\), from option\)$/,
      );
      expect(tf.getBackend()).toBe('webgpu');
      // a tensor that lives on the device: read asynchronously (there is no synchronous read in Node)
      const x = tf.matMul(tf.ones([64, 64]), tf.ones([64, 64]));
      expect((await x.data())[0]).toBe(64);
      x.dispose();
    },
  );

  it.skipIf(skip !== null)(`auto passes over a software adapter, saying so, and takes it only when asked${skip ?? ''}`, async () => {
    await selectBackend({ backend: 'webgpu' });
    const a = webgpuAdapter()!;
    const lines: string[] = [];
    const got = await selectBackend({}, { info: (m) => lines.push(m) });
    if (a.software) {
      expect(got).toBe('wasm');
      expect(lines[0]).toContain(`webgpu passed over: only a software adapter ${a.device} (vendor`);
      expect(lines[0]).toContain('slower than wasm (--backend webgpu takes it)');
    } else expect(got).toBe('webgpu');
  });

  it.skipIf(skip !== null)(
    `refuses a weight larger than the adapter's storage-buffer limit, naming it and the limit${skip ?? ''}`,
    async () => {
      await selectBackend({ backend: 'webgpu' });
      const limit = webgpuAdapter()!.maxBinding;
      expect(() => checkBufferLimit('model.layers.0.mlp.up_proj.weight', limit / 4)).not.toThrow();
      expect(() => checkBufferLimit('model.layers.0.mlp.up_proj.weight', limit / 4 + 1)).toThrow(
        `backend webgpu cannot hold model.layers.0.mlp.up_proj.weight: ${limit + 4} bytes, over the adapter`,
      );
      // a model whose embedding table is over the limit fails as it loads, before any kernel runs (no host data is made)
      const config = parseModelConfig({
        vocab_size: Math.ceil(limit / 4 / 64) + 1,
        hidden_size: 64,
        intermediate_size: 128,
        num_hidden_layers: 1,
        num_attention_heads: 4,
        num_key_value_heads: 2,
        head_dim: 16,
        max_position_embeddings: 64,
      });
      const huge = (shape: number[]) => ({ shape, data: { length: shape[0]! * shape[1]! } }) as unknown as HostTensor;
      expect(() =>
        Qwen3Model.fromWeights(config, (name) => (name === 'model.embed_tokens.weight' ? huge([config.vocab_size, 64]) : undefined)),
      ).toThrow(/model\.embed_tokens\.weight.*storage-buffer limit of \d+ bytes/);
    },
  );

  // last: a refused kernel leaves the device's results wrong for the rest of the process
  it.skipIf(skip !== null)(
    `a kernel the device refuses fails the next read, saying why, instead of giving wrong numbers${skip ?? ''}`,
    async () => {
      await selectBackend({ backend: 'webgpu' });
      const limit = (tf.backend() as unknown as { device: { limits: { maxStorageBuffersPerShaderStage: number } } }).device.limits
        .maxStorageBuffersPerShaderStage;
      const xs = Array.from({ length: limit + 4 }, () => tf.ones([64, 64])); // an AddN binds every input to one shader
      const sum = tf.addN(xs);
      await expect(sum.data()).rejects.toThrow(/the webgpu device refused a kernel, so its results are wrong: .*storage buffers/);
      tf.dispose([sum, ...xs]);
    },
  );

  it('on another backend, the buffer limit is not checked', async () => {
    await selectBackend({ backend: 'cpu' });
    expect(webgpuAdapter()).toBeNull();
    expect(() => checkBufferLimit('x', 2 ** 40)).not.toThrow();
  });
});
