import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { batchFromRows, type RolloutRowInput } from '@rlvr/core';
import { loadModel, selectBackend } from '@rlvr/policy';
import { computeSaliency } from '@rlvr/saliency';
import { prepareEstimator } from '@rlvr/advantages';

const require = createRequire(import.meta.url);
const binOf = (pkg: string, bin: string): string => {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin: bins } = JSON.parse(require('node:fs').readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  return join(dirname(manifest), bins[bin]!);
};
const here = dirname(fileURLToPath(import.meta.url));
// The tiny random Qwen3 model and padded batch that @rlvr/saliency checks against PyTorch.
const fixtures = join(here, '../../../packages/saliency/test/fixtures');

/** Run `a | b` as real processes and collect b's stdout. */
function pipe(a: string[], b: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const p1 = spawn(process.execPath, a, { stdio: ['ignore', 'pipe', 'pipe'] });
    const p2 = spawn(process.execPath, b, { stdio: ['pipe', 'pipe', 'pipe'] });
    p1.stdout.pipe(p2.stdin);
    let out = '';
    let err = '';
    p1.stderr.on('data', (c) => (err += c));
    p2.stderr.on('data', (c) => (err += c));
    p2.stdout.on('data', (c) => (out += c));
    let code1: number | null = null;
    p1.on('exit', (c) => (code1 = c));
    p2.on('exit', (code2) => (code1 === 0 && code2 === 0 ? resolve(out) : reject(new Error(`exit ${code1}/${code2}: ${err}`))));
  });
}

describe('rlvr-saliency | rlvr-advantages', () => {
  it('gives the same GRAIL advantages as the libraries in process', async () => {
    const rows = JSON.parse(await readFile(join(fixtures, 'batch.json'), 'utf8')) as RolloutRowInput[];
    const dir = await mkdtemp(join(tmpdir(), 'rlvr-pipeline-'));
    const input = join(dir, 'rows.jsonl');
    await writeFile(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

    const out = await pipe(
      [
        binOf('@rlvr/saliency', 'rlvr-saliency'),
        '--model',
        join(fixtures, 'tiny'),
        '--method',
        'grad-x-emb',
        '--backend',
        'cpu',
        '--in',
        input,
        '--format',
        'advantages',
      ],
      [binOf('@rlvr/advantages', 'rlvr-advantages'), '--estimator', 'grail', '--symmetry', 'both', '--weights'],
    );
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { advantages: number[]; weights: number[] });
    expect(lines).toHaveLength(rows.length);

    await selectBackend({ backend: 'cpu' });
    const model = loadModel(join(fixtures, 'tiny'));
    const batch = batchFromRows(rows);
    const { signals } = await computeSaliency('grad-x-emb', model, batch);
    const est = prepareEstimator('grail', { symmetry: 'both' }).estimate(batch, signals);
    let nonUniform = 0;
    lines.forEach((line, i) => {
      const c0 = batch.completionOffsets[i]!;
      const c1 = batch.completionOffsets[i + 1]!;
      expect(line.advantages).toHaveLength(c1 - c0);
      line.advantages.forEach((a, t) => expect(a).toBeCloseTo(est.advantages[c0 + t]!, 5));
      line.weights.forEach((w, t) => {
        expect(w).toBeCloseTo(est.weights[c0 + t]!, 5);
        if (Math.abs(w - 1) > 1e-3) nonUniform++;
      });
    });
    expect(nonUniform).toBeGreaterThan(0); // the saliency really shaped the weights
    model.dispose();
  });
});
