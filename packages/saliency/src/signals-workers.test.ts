import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNAL_NAMES } from '@rlvr/core';
import { PolicyWorkers, type Qwen3Model } from '@rlvr/policy';
import { computeSignals, parseSignalConfig, refreshSignals } from './signals.js';
import { tf } from './tf.js';
import { computeSignalsOnWorkers, refreshSignalsOnWorkers } from './signals-workers.js';
import { fixtureBatch, relError, tinyModel, useBackend } from './test-utils/fixtures.js';

// The workers load the signals task from dist/ (a worker cannot run TypeScript): build first.
const batch = fixtureBatch();
const pass = { padId: 0, tokenBudget: 8192 };

describe('computeSignalsOnWorkers', () => {
  let model: Qwen3Model;
  let one: PolicyWorkers;
  let two: PolicyWorkers;
  beforeAll(async () => {
    await useBackend('cpu');
    model = tinyModel();
    [one, two] = await Promise.all([PolicyWorkers.start(model, { workers: 1 }), PolicyWorkers.start(model, { workers: 2 })]);
  });
  afterAll(async () => {
    await Promise.all([one.close(), two.close()]);
    model.dispose();
  });

  it('with 1 worker equals computeSignals bit for bit; with 2, within float rounding, rows in batch order', async () => {
    expect(batch.numRollouts).toBeGreaterThan(2);
    const plan = parseSignalConfig({}, [SIGNAL_NAMES.gradXEmb, SIGNAL_NAMES.entropy, SIGNAL_NAMES.logprobsOld]);
    const want = await computeSignals(model, batch, plan, pass);
    const a = await computeSignalsOnWorkers(one, model, batch, plan, pass);
    expect(a.results['grad-x-emb']).toEqual(want.results['grad-x-emb']);
    expect(a.oldLogprobs).toEqual(want.oldLogprobs);
    const b = await computeSignalsOnWorkers(two, model, batch, plan, pass);
    const r = b.results['grad-x-emb']!;
    const w = want.results['grad-x-emb']!;
    expect(Array.from(r.hasScores)).toEqual(Array.from(w.hasScores));
    expect(r.missing).toBe(w.missing);
    expect(relError(r.scores, w.scores)).toBeLessThan(1e-5);
    expect(relError(r.loss!, w.loss!)).toBeLessThan(1e-5);
    expect(relError(b.oldLogprobs!, want.oldLogprobs!)).toBeLessThan(1e-5);
    expect(relError(b.signals.get(SIGNAL_NAMES.entropy), want.signals.get(SIGNAL_NAMES.entropy))).toBeLessThan(1e-5);
    // both workers had rows (so the split is exercised), and their last task ran on the published weights
    expect(two.lastRun!.task.every((s) => s > 0)).toBe(true);
  });

  it('runs the policy pass on the workers when no fused backend gives the log-probs, and noisy-kl in this thread', async () => {
    const plan = parseSignalConfig({}, [SIGNAL_NAMES.perturbation, SIGNAL_NAMES.logprobsOld]);
    const want = await computeSignals(model, batch, plan, pass);
    const got = await computeSignalsOnWorkers(two, model, batch, plan, pass);
    expect(relError(got.oldLogprobs!, want.oldLogprobs!)).toBeLessThan(1e-5);
    expect(relError(got.results.perturbation!.scores, want.results.perturbation!.scores)).toBeLessThan(1e-4);
    const kl = parseSignalConfig({}, [SIGNAL_NAMES.noisyKl]);
    const local = await computeSignalsOnWorkers(two, model, batch, kl, pass);
    expect(local.results['noisy-kl']).toEqual((await computeSignals(model, batch, kl, pass)).results['noisy-kl']);
  });

  it("a worker's error names the rollout by its index in the batch, not in the worker's share", async () => {
    const plan = parseSignalConfig({ refresh: 'minibatch' }, [SIGNAL_NAMES.gradXEmb, SIGNAL_NAMES.logprobsOld]);
    // the last rollout's last completion token is no token id: it falls in the second worker's share
    const last = batch.numRollouts - 1;
    const bad = { ...batch, completionTokens: batch.completionTokens.slice() };
    const at = bad.completionOffsets[last + 1]! - 1;
    bad.completionTokens[at] = 1_000_000;
    const tokenIndex = at - bad.completionOffsets[last]!;
    const named = new RegExp(
      `threw SaliencyError: rollout ${last}, field completion: completion\\[${tokenIndex}\\] = 1000000 is not a token id`,
    );
    // a failed run closes its workers: a fresh pair each time
    const fresh = () => PolicyWorkers.start(model, { workers: 2 });
    await expect(computeSignalsOnWorkers(await fresh(), model, bad, plan, pass)).rejects.toThrow(named);
    // refreshing rows [last, 0]: the first worker's share is the batch's rollout `last`, its rollout 0
    const base = (await computeSignals(model, batch, plan, pass)).signals;
    await expect(refreshSignalsOnWorkers(await fresh(), model, bad, [last, 0], plan, base)).rejects.toThrow(named);
  });

  it('refreshSignalsOnWorkers: the signals of some rows recomputed there, 1 worker bit for bit, 2 within float rounding', async () => {
    const plan = parseSignalConfig({ refresh: 'minibatch' }, [SIGNAL_NAMES.gradXEmb, SIGNAL_NAMES.logprobsOld]);
    const base = (await computeSignals(model, batch, plan, pass)).signals;
    // parameters moved since the behaviour pass, so the refreshed rows differ from the base
    const moved = tinyModel();
    for (const v of moved.params.values()) tf.tidy(() => v.assign(tf.mul(v, 1.01)));
    const rows = [1, 0]; // in the order a shuffled mini-batch gives them
    const want = await refreshSignals(moved, batch, rows, plan, base);
    const [m1, m2] = await Promise.all([PolicyWorkers.start(moved, { workers: 1 }), PolicyWorkers.start(moved, { workers: 2 })]);
    try {
      const a = await refreshSignalsOnWorkers(m1, moved, batch, rows, plan, base);
      for (const name of want.names()) expect(Array.from(a.get(name)), name).toEqual(Array.from(want.get(name)));
      const b = await refreshSignalsOnWorkers(m2, moved, batch, rows, plan, base);
      expect(relError(b.get(SIGNAL_NAMES.gradXEmb), want.get(SIGNAL_NAMES.gradXEmb))).toBeLessThan(1e-5);
      expect(Array.from(b.get(SIGNAL_NAMES.logprobsOld))).toEqual(Array.from(base.get(SIGNAL_NAMES.logprobsOld)));
      expect(m2.lastRun!.task.every((s) => s > 0)).toBe(true);
      // the refreshed rows changed, the others kept the base's scores
      const changed = (i: number) =>
        Array.from(want.get(SIGNAL_NAMES.gradXEmb).subarray(batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!)).some(
          (v, t) => v !== base.get(SIGNAL_NAMES.gradXEmb)[batch.completionOffsets[i]! + t],
        );
      expect(rows.every(changed)).toBe(true);
      expect(
        Array.from({ length: batch.numRollouts }, (_, i) => i)
          .filter((i) => !rows.includes(i))
          .some(changed),
      ).toBe(false);
    } finally {
      await Promise.all([m1.close(), m2.close()]);
      moved.dispose();
    }
  });
  it("refreshSignalsOnWorkers, no saliency backend: the refreshed rows' entropy from a forward pass there, as in this thread", async () => {
    const plan = parseSignalConfig({ refresh: 'minibatch' }, [SIGNAL_NAMES.entropy, SIGNAL_NAMES.logprobsOld]);
    const base = (await computeSignals(model, batch, plan, pass)).signals;
    const moved = tinyModel();
    for (const v of moved.params.values()) tf.tidy(() => v.assign(tf.mul(v, 1.05)));
    const rows = [2, 1];
    const want = await refreshSignals(moved, batch, rows, plan, base, pass);
    const [m1, m2] = await Promise.all([PolicyWorkers.start(moved, { workers: 1 }), PolicyWorkers.start(moved, { workers: 2 })]);
    try {
      const a = await refreshSignalsOnWorkers(m1, moved, batch, rows, plan, base, pass);
      expect(m1.lastRun).not.toBeNull(); // the pass ran on the worker
      for (const name of want.names()) expect(Array.from(a.get(name)), name).toEqual(Array.from(want.get(name)));
      const b = await refreshSignalsOnWorkers(m2, moved, batch, rows, plan, base, pass);
      expect(m2.lastRun!.task.every((s) => s > 0)).toBe(true);
      expect(relError(b.get(SIGNAL_NAMES.entropy), want.get(SIGNAL_NAMES.entropy))).toBeLessThan(1e-5);
      expect(Array.from(b.get(SIGNAL_NAMES.logprobsOld))).toEqual(Array.from(base.get(SIGNAL_NAMES.logprobsOld)));
      // the refreshed rows are the moved policy's, not the behaviour policy's
      const o = batch.completionOffsets;
      const changed = (sig: typeof b, i: number) =>
        Array.from(sig.get(SIGNAL_NAMES.entropy).subarray(o[i]!, o[i + 1]!)).some(
          (v, t) => Math.abs(v - base.get(SIGNAL_NAMES.entropy)[o[i]! + t]!) > 1e-4,
        );
      expect(rows.every((i) => changed(b, i))).toBe(true);
      expect(changed(b, 0)).toBe(false);
    } finally {
      await Promise.all([m1.close(), m2.close()]);
      moved.dispose();
    }
  });
});
