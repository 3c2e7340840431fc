import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareEstimator, registerEstimator } from '@rlvr/advantages';
import { Signals, batchFromRows } from '@rlvr/core';
import { loadModel, selectBackend, type Qwen3Model } from '@rlvr/policy';
import { GAR_COSINE, GarBackendConfigSchema, garCosines, garEstimator, type TeacherAnchors } from './index.js';
import { tf } from './tf.js';

registerEstimator(garEstimator);

interface Row {
  group: number;
  reward: number;
  prompt: number[];
  completion: number[];
  reference: number[];
}
type Readings = { perAnchor: number[][] } & Record<'residual' | 'max' | 'expert', number[]>;
/** Written by tools/fixtures/gar/torch_reference.py: the authors' computation in float64 PyTorch on the tiny Qwen3 below. */
const fixture = JSON.parse(readFileSync(new URL('../test/fixtures/torch-reference.json', import.meta.url), 'utf8')) as {
  rows: Row[];
  teachers: number[][][];
  cosines: Record<'1.0' | '0.7', Readings>;
  advantages: number[];
};
const TINY = fileURLToPath(new URL('../test/fixtures/tiny', import.meta.url));

const batch = batchFromRows(fixture.rows);
const teachers: TeacherAnchors = (i) => fixture.teachers[batch.groupIndex[i]!]!.map((t) => Int32Array.from(t));

// rlvr train's default backend (wasm) and cpu. The model runs in float32 here, in float64 there: the cosines of
// unit D-vectors agree to 1e-6 absolute, and so do the advantages built from them.
describe.each(['cpu', 'wasm'] as const)("GAR's default against the PyTorch port of the authors' code (%s)", (backend) => {
  let model: Qwen3Model;
  beforeAll(async () => {
    await selectBackend({ backend });
    model = loadModel(TINY);
    await garCosines(model, batch, GarBackendConfigSchema.parse({}), teachers); // warm-up: the policy caches transposed weights
  });
  afterAll(() => model.dispose());

  it.each([
    ['residual', '1.0', {}],
    ['max', '1.0', { anchors: 'max' }],
    ['expert', '0.7', { anchors: 'expert', temperature: 0.7 }],
  ] as const)('cosines, anchors %s at temperature %s, within 1e-6; empty rollouts get no score', async (how, tau, over) => {
    const before = tf.memory().numTensors;
    const r = await garCosines(model, batch, GarBackendConfigSchema.parse({ tokenBudget: 40, ...over }), teachers);
    expect(tf.memory().numTensors).toBe(before);
    const want = fixture.cosines[tau][how];
    fixture.rows.forEach((row, i) => {
      expect(r.hasScores[i], `rollout ${i}`).toBe(row.completion.length > 0 ? 1 : 0);
      expect(Math.abs(r.scores[i]! - want[i]!), `rollout ${i}`).toBeLessThan(1e-6);
    });
    expect(r.scores[3]).toBeCloseTo(1, 6); // rollout 3 is its group's expert solution, the best anchor
  });

  it('the default advantages (correct rollouts, centred hinge, beta 0.5, Dr. GRPO) within 1e-6', async () => {
    const r = await garCosines(model, batch, GarBackendConfigSchema.parse({}), teachers);
    const signals = Signals.forBatch(batch).setPerRollout(GAR_COSINE, r.scores);
    const a = prepareEstimator('gar').estimate(batch, signals).advantages;
    expect(a.length).toBe(fixture.advantages.length);
    fixture.advantages.forEach((e, t) => expect(Math.abs(a[t]! - e), `token ${t}`).toBeLessThan(1e-6));
    expect(new Set(fixture.advantages.map((x) => x.toFixed(6))).size).toBeGreaterThan(4); // the bonus separates rollouts
  });
});
