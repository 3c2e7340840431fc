import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selectBackend } from '@rlvr/policy';
import { readRunDir } from '@rlvr/report';
import { afterAll, describe, expect, test } from 'vitest';
import { binPath, runNode } from '../test-utils/run-cli.js';

// `rlvr train --backend webgpu --steps 2` through the package's bin, against `--backend cpu`: in CI on
// Dawn's OpenGL ES backend over Mesa's llvmpipe (see .ci/run). Where no adapter starts, the test is
// skipped and its name says why.
let skip: string | null = null;
try {
  await selectBackend({ backend: 'webgpu' });
} catch (e) {
  skip = ` (skipped: ${(e as Error).message})`;
}

const root = await mkdtemp(join(tmpdir(), 'rlvr-webgpu-'));
afterAll(() => rm(root, { recursive: true, force: true }));

/** The embedded default, 2 prompts x 4 completions, a small held-out check. */
const MICRO = {
  rollout: { prompts: 2, groupSize: 4, maxNewTokens: 24 },
  eval: { every: 2, problems: 2, n: 1, maxNewTokens: 16 },
  checkpointEvery: 0,
};

describe('rlvr train --backend webgpu', () => {
  test.skipIf(skip !== null)(
    `runs 2 steps on the adapter, naming it, and every logged loss agrees with --backend cpu to 1e-5${skip ?? ''}`,
    async () => {
      const cfg = join(root, 'micro.json');
      await writeFile(cfg, JSON.stringify(MICRO));
      const run = (backend: string) =>
        runNode(binPath('@rlvr/reference-trainer', 'rlvr'), [
          'train',
          '--config',
          cfg,
          '--out',
          join(root, backend),
          '--steps',
          '2',
          '--backend',
          backend,
        ]);
      const [gpu, cpu] = [await run('webgpu'), await run('cpu')];
      expect(gpu.code, gpu.stderr).toBe(0);
      expect(cpu.code, cpu.stderr).toBe(0);
      expect(gpu.stderr).toMatch(
        /rlvr train: tfjs backend: webgpu \(@tensorflow\/tfjs-backend-webgpu on Dawn, adapter .+ \(vendor .+, architecture .+, backend \w+/,
      );
      const [g, c] = [(await readRunDir(join(root, 'webgpu'))).metrics, (await readRunDir(join(root, 'cpu'))).metrics];
      const steps = (m: typeof g) => m.filter((r) => 'loss/policy' in r);
      expect(steps(g).map((r) => r.step)).toEqual([1, 2]);
      expect(steps(c).map((r) => r.step)).toEqual([1, 2]);
      let worst = 0;
      let losses = 0;
      steps(c).forEach((row, i) => {
        // the same rollouts: sampled under the same seed on both backends
        expect(steps(g)[i]!['completions/mean_length']).toBe(row['completions/mean_length']);
        expect(steps(g)[i]!['reward/mean']).toBe(row['reward/mean']);
        for (const [k, v] of Object.entries(row)) {
          if (!k.startsWith('loss/')) continue;
          losses++;
          worst = Math.max(worst, Math.abs((steps(g)[i]![k] as number) - (v as number)));
        }
      });
      console.info(`rlvr train, webgpu vs cpu: ${losses} logged losses, max |diff| ${worst.toExponential(2)}`);
      expect(losses).toBeGreaterThanOrEqual(2);
      expect(worst).toBeLessThan(1e-5);
    },
  );
});
