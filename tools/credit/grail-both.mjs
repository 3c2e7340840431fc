// `rlvr credit --plugin tools/credit/grail-both.mjs`: registers `grail-both`, GRAIL with symmetry `both` (weights on
// correct rollouts too), so that the paper's claims about correct rollouts (the U-shape, the mid-chain contrast) can
// be scored on the same frozen batch as the reference's `grail` (symmetry `wrong`: correct rollouts keep weight 1).
import { getEstimator } from '@rlvr/advantages';

export function register({ registerEstimator }) {
  const grail = getEstimator('grail');
  registerEstimator({
    ...grail,
    name: 'grail-both',
    description: 'GRAIL with symmetry both: token weights on correct and wrong rollouts',
    estimate: (batch, signals, config, state) => grail.estimate(batch, signals, { ...config, symmetry: 'both' }, state),
  });
}
