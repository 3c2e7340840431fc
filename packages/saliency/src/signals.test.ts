import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNAL_NAMES, isRlvrError, takeRollouts } from '@rlvr/core';
import { batchLogprobs, type Qwen3Model } from '@rlvr/policy';
import { logprobsWithGradXEmb } from './grad-x-emb.js';
import { noisyKl } from './noisy-kl.js';
import { checkSignals, computeSignals, parseSignalConfig, refreshSignals, refreshesSignals } from './signals.js';
import { tf } from './tf.js';
import { SaliencyError } from './errors.js';
import { fixtureBatch, tinyModel, useBackend } from './test-utils/fixtures.js';

const batch = fixtureBatch();
const pass = { padId: 0, tokenBudget: 8192 };

function configError(f: () => unknown): SaliencyError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(SaliencyError);
    expect(isRlvrError(e)).toBe(true);
    expect((e as SaliencyError).code).toBe('invalid_config');
    return e as SaliencyError;
  }
  throw new Error('expected an invalid_config error');
}

describe('parseSignalConfig (before anything loads: no model)', () => {
  it('resolves which backend produces each signal, with its parsed options', () => {
    const plan = parseSignalConfig({ 'grad-x-emb': { alignment: 'own' } }, [SIGNAL_NAMES.gradXEmb, SIGNAL_NAMES.entropy]);
    expect(plan.sources.map((s) => [s.backend.name, s.signal])).toEqual([['grad-x-emb', SIGNAL_NAMES.gradXEmb]]);
    expect(plan.sources[0]!.config).toMatchObject({ alignment: 'own', answerSpan: 'boxed', temperature: 1, tokenBudget: 8192 });
    expect(plan.logprobsFrom).toBe('grad-x-emb');
    expect(parseSignalConfig({}, [SIGNAL_NAMES.noisyKl]).logprobsFrom).toBe('noisy-kl');
    expect(parseSignalConfig({}, [SIGNAL_NAMES.perturbation]).logprobsFrom).toBeNull();
    expect(parseSignalConfig(undefined, []).sources).toEqual([]);
  });

  it('refresh and box: defaults batch and first (the GRAIL reference box), anything else is named', () => {
    const plan = parseSignalConfig({}, [SIGNAL_NAMES.gradXEmb]);
    expect([plan.refresh, plan.box]).toEqual(['batch', 'first']);
    expect(parseSignalConfig({ box: 'last', refresh: 'minibatch' }, [SIGNAL_NAMES.gradXEmb])).toMatchObject({
      box: 'last',
      refresh: 'minibatch',
    });
    const e = configError(() => parseSignalConfig({ box: 'final' }, [SIGNAL_NAMES.gradXEmb], { field: 'variants.g.saliency' }));
    expect(e.message).toBe('field variants.g.saliency.box: must be one of "first", "last", got "final"');
  });

  it('checks the options of every backend it names, needed or not', () => {
    const plan = parseSignalConfig({ perturbation: { window: 4 } }, []);
    expect(plan.sources).toEqual([]);
    expect(plan.options.perturbation).toMatchObject({ window: 4, alignment: 'own' });
    expect(configError(() => parseSignalConfig({ perturbation: { window: 0 } }, [])).message).toMatch(
      /^field saliency\.perturbation: .*window: /,
    );
  });

  it('an unknown backend or a misspelled option is an error naming it', () => {
    let e = configError(() => parseSignalConfig({ 'grad-x-embb': {} }, [SIGNAL_NAMES.gradXEmb]));
    expect(e.location.field).toBe('saliency.grad-x-embb');
    expect(e.message).toContain('unknown saliency backend "grad-x-embb"; known: grad-x-emb, noisy-kl, perturbation, precomputed');
    e = configError(() => parseSignalConfig({ 'grad-x-emb': { temprature: 0.7 } }, [SIGNAL_NAMES.gradXEmb]));
    expect(e.message).toBe(
      'field saliency.grad-x-emb: invalid saliency backend grad-x-emb configuration: unknown key: temprature (did you mean temperature?)',
    );
    e = configError(() =>
      parseSignalConfig({ 'noisy-kl': { noiseStd: -1 } }, [SIGNAL_NAMES.noisyKl], { field: 'estimators.oar-g.saliency' }),
    );
    expect(e.location.field).toBe('estimators.oar-g.saliency.noisy-kl');
    expect(configError(() => parseSignalConfig([], [])).message).toMatch(/^field saliency: must be an object/);
  });

  it('one temperature: a fused pass whose log-probs are the old ones takes the trainer temperature, and refuses another', () => {
    const inherit = parseSignalConfig({}, [SIGNAL_NAMES.gradXEmb], { temperature: 0.7 });
    expect(inherit.temperature).toBe(0.7);
    expect(inherit.sources[0]!.config).toMatchObject({ temperature: 0.7 });
    expect(parseSignalConfig({ 'grad-x-emb': { temperature: 0.7 } }, [SIGNAL_NAMES.gradXEmb], { temperature: 0.7 }).logprobsFrom).toBe(
      'grad-x-emb',
    );
    const e = configError(() => parseSignalConfig({ 'grad-x-emb': { temperature: 0.7 } }, [SIGNAL_NAMES.gradXEmb]));
    expect(e.location.field).toBe('saliency.grad-x-emb.temperature');
    expect(e.message).toContain('is 0.7 but trainer.temperature is 1');
    // a backend whose log-probs are not used as old log-probs keeps its own temperature
    expect(parseSignalConfig({ perturbation: { temperature: 2 } }, [SIGNAL_NAMES.perturbation]).sources[0]!.config).toMatchObject({
      temperature: 2,
    });
  });

  it('a signal nothing produces is refused, naming the estimator and what is available', () => {
    const e = configError(() => checkSignals(['my.signal'], 'grpo+mine'));
    expect(e.message).toBe(
      'field estimator: estimator grpo+mine needs signal my.signal, which no saliency backend produces (available: logprobs.old, policy.entropy, saliency.gradXEmb, saliency.noisyKl, saliency.perturbation)',
    );
    expect(() => parseSignalConfig({}, ['my.signal'], { estimator: 'grpo+mine' })).toThrow(/estimator grpo\+mine needs signal my\.signal/);
  });
});

describe('computeSignals (cpu)', () => {
  let model: Qwen3Model;
  beforeAll(async () => {
    await useBackend('cpu');
    model = tinyModel();
  });
  afterAll(() => model.dispose());

  it('the fused pass gives the scores and the old log-probs and entropies; they agree with a forward pass', async () => {
    const fused = await computeSignals(model, batch, parseSignalConfig({}, [SIGNAL_NAMES.gradXEmb, SIGNAL_NAMES.entropy]), pass);
    const direct = await logprobsWithGradXEmb(model, batch);
    expect(fused.signals.get(SIGNAL_NAMES.gradXEmb)).toEqual(direct.scores);
    expect(fused.oldLogprobs).toEqual(direct.logprobs);
    expect(fused.signals.get(SIGNAL_NAMES.entropy)).toEqual(direct.entropy);
    expect(fused.results['grad-x-emb']!.hasScores).toEqual(direct.hasScores);
    const forward = await computeSignals(model, batch, parseSignalConfig({}, [SIGNAL_NAMES.logprobsOld, SIGNAL_NAMES.entropy]), pass);
    const want = await batchLogprobs(model, batch, pass);
    expect(forward.oldLogprobs).toBe(forward.signals.get(SIGNAL_NAMES.logprobsOld));
    expect(forward.oldLogprobs).toEqual(want.logprobs);
    for (let t = 0; t < want.logprobs.length; t++) expect(direct.logprobs[t]).toBeCloseTo(want.logprobs[t]!, 4);
  });

  it('no signal needed: no pass and no old log-probs; a non-fused backend leaves the old log-probs to the trainer', async () => {
    const none = await computeSignals(model, batch, parseSignalConfig({}, []), pass);
    expect(none.oldLogprobs).toBeUndefined();
    expect(none.signals.names()).toEqual([]);
    const pert = await computeSignals(model, batch, parseSignalConfig({ perturbation: { window: 2 } }, [SIGNAL_NAMES.perturbation]), pass);
    expect(pert.oldLogprobs).toBeUndefined();
    expect(pert.signals.get(SIGNAL_NAMES.perturbation).some((x) => x > 0)).toBe(true);
  });

  it('the OAR-G signal comes from its backend with the configured options, the old log-probs from its clean pass', async () => {
    const oar = await computeSignals(model, batch, parseSignalConfig({ 'noisy-kl': { seed: 3 } }, [SIGNAL_NAMES.noisyKl]), pass);
    const direct = await noisyKl(model, batch, { seed: 3 });
    expect(oar.signals.get(SIGNAL_NAMES.noisyKl)).toEqual(direct.scores);
    expect(oar.oldLogprobs).toEqual(direct.logprobs);
    // every rollout has log-probs, the one without an answer (no scores) included
    const want = await batchLogprobs(model, batch, pass);
    for (let t = 0; t < want.logprobs.length; t++) {
      expect(direct.logprobs[t]).toBeCloseTo(want.logprobs[t]!, 4);
      expect(direct.entropy[t]).toBeCloseTo(want.entropy[t]!, 4);
    }
  });
});

describe('refreshSignals: policy.entropy with the current parameters, the old log-probs kept', () => {
  let model: Qwen3Model;
  let moved: Qwen3Model;
  beforeAll(async () => {
    await useBackend('cpu');
    model = tinyModel();
    // the parameters after some updates: every one scaled, so every token's entropy moves
    moved = tinyModel();
    for (const v of moved.params.values()) tf.tidy(() => v.assign(tf.mul(v, 1.05)));
  });
  afterAll(() => {
    model.dispose();
    moved.dispose();
  });
  const rows = [2, 0]; // in the order a shuffled mini-batch gives them
  const tokens = (i: number) =>
    Array.from({ length: batch.completionOffsets[i + 1]! - batch.completionOffsets[i]! }, (_, t) => batch.completionOffsets[i]! + t);
  const others = Array.from({ length: batch.numRollouts }, (_, i) => i).filter((i) => !rows.includes(i));

  it('refreshesSignals: epoch or minibatch, with a signal that reads the parameters (the entropy counts; the old log-probs do not)', () => {
    const entropyOnly = [SIGNAL_NAMES.entropy, SIGNAL_NAMES.logprobsOld];
    expect(refreshesSignals(parseSignalConfig({ refresh: 'minibatch' }, entropyOnly))).toBe(true);
    expect(refreshesSignals(parseSignalConfig({ refresh: 'epoch' }, [SIGNAL_NAMES.entropy]))).toBe(true);
    expect(refreshesSignals(parseSignalConfig({ refresh: 'minibatch' }, [SIGNAL_NAMES.gradXEmb]))).toBe(true);
    expect(refreshesSignals(parseSignalConfig({}, entropyOnly))).toBe(false);
    expect(refreshesSignals(parseSignalConfig({ refresh: 'minibatch' }, [SIGNAL_NAMES.logprobsOld]))).toBe(false);
    expect(refreshesSignals(parseSignalConfig({ refresh: 'minibatch' }, []))).toBe(false);
  });

  it('no saliency backend: a forward pass of the refreshed rows gives their entropy; other rows and the old log-probs stay', async () => {
    const plan = parseSignalConfig({ refresh: 'minibatch' }, [SIGNAL_NAMES.entropy, SIGNAL_NAMES.logprobsOld]);
    expect(plan.sources).toEqual([]);
    const base = (await computeSignals(model, batch, plan, pass)).signals;
    const refreshed = await refreshSignals(moved, batch, rows, plan, base, pass);
    // independently: the moved model's whole batch in one forward pass
    const want = (await batchLogprobs(moved, batch, { ...pass, tokenBudget: 1 << 20 })).entropy;
    const h = refreshed.get(SIGNAL_NAMES.entropy);
    const h0 = base.get(SIGNAL_NAMES.entropy);
    for (const t of rows.flatMap(tokens)) {
      expect(Math.abs(h[t]! - want[t]!)).toBeLessThan(1e-5 * Math.max(1, want[t]!));
      expect(Math.abs(h[t]! - h0[t]!)).toBeGreaterThan(1e-4); // not the behaviour policy's
    }
    for (const t of others.flatMap(tokens)) expect(h[t]).toBe(h0[t]);
    expect(refreshed.get(SIGNAL_NAMES.logprobsOld)).toEqual(base.get(SIGNAL_NAMES.logprobsOld));
    // the base is not written to
    expect(base.get(SIGNAL_NAMES.entropy)).toEqual((await computeSignals(model, batch, plan, pass)).signals.get(SIGNAL_NAMES.entropy));
  });

  it('a fused backend: its recomputed pass gives the entropy (no second forward pass)', async () => {
    const plan = parseSignalConfig({ refresh: 'epoch' }, [SIGNAL_NAMES.gradXEmb, SIGNAL_NAMES.entropy]);
    const base = (await computeSignals(model, batch, plan, pass)).signals;
    const refreshed = await refreshSignals(moved, batch, rows, plan, base, pass);
    const sub = takeRollouts(batch, rows);
    const fused = await logprobsWithGradXEmb(moved, sub);
    const forward = (await batchLogprobs(moved, batch, pass)).entropy;
    const h = refreshed.get(SIGNAL_NAMES.entropy);
    rows.forEach((i, k) => {
      const mine = h.subarray(batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!);
      expect(Array.from(mine)).toEqual(Array.from(fused.entropy.subarray(sub.completionOffsets[k]!, sub.completionOffsets[k + 1]!)));
      for (const t of tokens(i)) expect(h[t]).toBeCloseTo(forward[t]!, 4);
    });
    for (const t of others.flatMap(tokens)) expect(h[t]).toBe(base.get(SIGNAL_NAMES.entropy)[t]);
    expect(rows.flatMap(tokens).some((t) => Math.abs(h[t]! - base.get(SIGNAL_NAMES.entropy)[t]!) > 1e-4)).toBe(true);
  });
});
