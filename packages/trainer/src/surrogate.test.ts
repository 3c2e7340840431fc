import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '@rlvr/policy';
import { clippedSurrogate, type SurrogateOptions } from './surrogate.js';
import { klPenalty } from './kl.js';
import { stopGradient } from './stop-gradient.js';

const opts: SurrogateOptions = { clipLow: 0.2, clipHigh: 0.28, dualClip: null, logRatioClamp: 20 };

beforeAll(async () => {
  await selectBackend({ backend: 'cpu' });
});

/** Loss and d loss / d logp per token, for one row of tokens. */
function lossAndGrad(logp: number[], old: number[], adv: number[], o: SurrogateOptions): { loss: number[]; grad: number[] } {
  const x = tf.tensor2d([logp]);
  const f = (lp: tf.Tensor) => tf.sum(clippedSurrogate(lp, tf.tensor2d([old]), tf.tensor2d([adv]), o).loss);
  const grad = tf.grad(f)(x);
  const terms = clippedSurrogate(x, tf.tensor2d([old]), tf.tensor2d([adv]), o);
  return { loss: Array.from(terms.loss.dataSync()), grad: Array.from(grad.dataSync()) };
}

describe('clippedSurrogate', () => {
  it('matches the hand-derived loss and gradient in every region', () => {
    // token: (ratio, A) -> region
    const ratios = [1.0, 1.5, 0.5, 1.5, 0.5, 1.1];
    const adv = [2, 2, 2, -1, -1, -3];
    const old = ratios.map(() => -1.2);
    const logp = ratios.map((r, i) => old[i]! + Math.log(r));
    const { loss, grad } = lossAndGrad(logp, old, adv, opts);
    // 0: r=1, A>0: l = -A r = -2, dl/dlogp = -A r = -2
    // 1: r=1.5 > 1.28, A>0: clipped, l = -2 * 1.28, grad 0
    // 2: r=0.5 < 0.8, A>0: unclipped branch is the max, l = -1, grad = -A r = -1
    // 3: r=1.5, A<0: l = max(1.5, 1.28) = 1.5, grad = -A r = 1.5
    // 4: r=0.5 < 0.8, A<0: clipped, l = 1 * 0.8 = 0.8, grad 0
    // 5: r=1.1 inside, A=-3: l = 3.3, grad 3.3
    const wantLoss = [-2, -2.56, -1, 1.5, 0.8, 3.3];
    const wantGrad = [-2, 0, -1, 1.5, 0, 3.3];
    loss.forEach((v, i) => expect(v).toBeCloseTo(wantLoss[i]!, 5));
    grad.forEach((v, i) => expect(v).toBeCloseTo(wantGrad[i]!, 5));
  });

  it('dual clip caps the loss of negative advantages at -A c', () => {
    const o = { ...opts, dualClip: 3 };
    const old = [-2, -2, -2];
    const logp = [-2 + Math.log(5), -2 + Math.log(2), -2 + Math.log(5)];
    const { loss, grad } = lossAndGrad(logp, old, [-1, -1, 1], o);
    // r=5, A=-1: min(max(5, 1.28), 3) = 3, grad 0; r=2 inside the cap: 2, grad 2;
    // A>0 is untouched by the dual clip: r=5 -> clipped at -1.28, grad 0
    expect(loss[0]).toBeCloseTo(3, 5);
    expect(grad[0]).toBeCloseTo(0, 6);
    expect(loss[1]).toBeCloseTo(2, 5);
    expect(grad[1]).toBeCloseTo(2, 5);
    expect(loss[2]).toBeCloseTo(-1.28, 5);
    expect(grad[2]).toBeCloseTo(0, 6);
  });

  it('reports clipped tokens on each side', () => {
    const old = [0, 0, 0, 0].map(() => -1);
    const logp = [Math.log(1.5), Math.log(0.5), Math.log(1.5), Math.log(0.5)].map((d) => -1 + d);
    const t = clippedSurrogate(tf.tensor2d([logp]), tf.tensor2d([old]), tf.tensor2d([[1, -1, -1, 1]]), opts);
    expect(Array.from(t.clippedHigh.dataSync())).toEqual([1, 0, 0, 0]);
    expect(Array.from(t.clippedLow.dataSync())).toEqual([0, 1, 0, 0]);
  });

  it('clamps the log-ratio before exp', () => {
    const t = clippedSurrogate(tf.tensor2d([[0]]), tf.tensor2d([[-100]]), tf.tensor2d([[-1]]), opts);
    expect(t.ratio.dataSync()[0]).toBeCloseTo(Math.exp(20), -3);
    expect(Number.isFinite(t.loss.dataSync()[0]!)).toBe(true);
  });

  it('gives advantages and old log-probs no gradient', () => {
    const f = (adv: tf.Tensor, old: tf.Tensor) => tf.sum(clippedSurrogate(tf.tensor2d([[-0.5, -0.7]]), old, adv, opts).loss);
    const [gAdv, gOld] = tf.grads(f)([tf.tensor2d([[1, -1]]), tf.tensor2d([[-0.6, -0.6]])]);
    expect(Array.from(gAdv!.dataSync())).toEqual([0, 0]);
    expect(Array.from(gOld!.dataSync())).toEqual([0, 0]);
    const g = tf.grad((x: tf.Tensor) => tf.sum(tf.mul(stopGradient(x), x)))(tf.tensor1d([3]));
    expect(g.dataSync()[0]).toBe(3);
  });
});

describe('klPenalty', () => {
  it('k1, k2, k3 values and gradients match their formulas', () => {
    const logp = [-1, -2, -0.5];
    const ref = [-1.5, -1, -0.5];
    for (const est of ['k1', 'k2', 'k3'] as const) {
      const x = tf.tensor1d(logp);
      const v = Array.from(klPenalty(x, tf.tensor1d(ref), est).dataSync());
      const g = Array.from(
        tf
          .grad((lp: tf.Tensor) => tf.sum(klPenalty(lp, tf.tensor1d(ref), est)))(x)
          .dataSync(),
      );
      logp.forEach((lp, i) => {
        const d = ref[i]! - lp;
        const [want, dwant] = est === 'k1' ? [-d, 1] : est === 'k2' ? [0.5 * d * d, -d] : [Math.exp(d) - d - 1, -Math.exp(d) + 1];
        expect(v[i]).toBeCloseTo(want, 5);
        expect(g[i]).toBeCloseTo(dwant, 5);
      });
    }
  });
});
