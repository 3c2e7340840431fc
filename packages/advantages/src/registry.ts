import { isRlvrError, Registry } from '@rlvr/core';
import { composeEstimator } from './compose.js';
import { AdvantagesError } from './errors.js';
import type { SchemaOf } from './option-types.js';
import type { AdvantageEstimator, SequenceBaseline, TokenWeighting } from './types.js';
import { grpo } from './baselines/grpo.js';
import { drGrpo } from './baselines/dr-grpo.js';
import { rloo } from './baselines/rloo.js';
import { reinforcePpBaseline } from './baselines/reinforce-pp-baseline.js';
import { uniform } from './weightings/uniform.js';
import { grail } from './weightings/grail.js';
import { oarG } from './weightings/oar-g.js';

/** Sequence baselines by name: grpo, dr-grpo, rloo, reinforce-pp-baseline, and any you register. */
export const baselines = new Registry<SequenceBaseline>('sequence baseline');
/** Token weightings by name: uniform, grail, oar-g, and any you register. */
export const weightings = new Registry<TokenWeighting>('token weighting');
/** Named estimators: the four baselines with uniform weights, grail and oar-g, and any you register. */
export const estimators = new Registry<AdvantageEstimator>('advantage estimator');

for (const b of [grpo, drGrpo, rloo, reinforcePpBaseline] as SequenceBaseline[]) {
  baselines.register(b);
  estimators.register(composeEstimator(b, uniform, b.name, b.description) as AdvantageEstimator);
}
for (const w of [uniform, grail, oarG] as TokenWeighting[]) weightings.register(w);
estimators.register(
  composeEstimator(drGrpo, grail, 'grail', 'GRAIL: Dr. GRPO advantages times GRAIL saliency weights') as AdvantageEstimator,
);
estimators.register(
  composeEstimator(drGrpo, oarG, 'oar-g', 'OAR-G: Dr. GRPO advantages times OAR-G saliency weights') as AdvantageEstimator,
);

/** Composed `baseline+weighting` estimators built so far, so a name resolves to one object. */
const composed = new Map<string, AdvantageEstimator>();

/**
 * The estimator called `name`: a registered one (`grail`), or `BASELINE+WEIGHTING`
 * (`grpo+grail`) composed from the two registries. An unknown name throws
 * `AdvantagesError('unknown_name')` listing the estimators, baselines and weightings.
 */
export function getEstimator<N extends string>(name: N): AdvantageEstimator<SchemaOf<N>> {
  return resolve(name) as AdvantageEstimator<SchemaOf<N>>;
}

function resolve(name: string): AdvantageEstimator {
  if (estimators.has(name)) return estimators.get(name);
  const plus = name.indexOf('+');
  if (plus > 0 && plus === name.lastIndexOf('+')) {
    const b = name.slice(0, plus);
    const w = name.slice(plus + 1);
    if (baselines.has(b) && weightings.has(w)) {
      const baseline = baselines.get(b);
      const weighting = weightings.get(w);
      const cached = composed.get(name);
      if (cached && cached.baseline === baseline && cached.weighting === weighting) return cached;
      const estimator = composeEstimator(baseline, weighting, name) as AdvantageEstimator;
      composed.set(name, estimator);
      return estimator;
    }
    const why = !baselines.has(b) ? `unknown sequence baseline "${b}"` : `unknown token weighting "${w}"`;
    throw new AdvantagesError('unknown_name', `unknown advantage estimator "${name}" (${why}); ${knownNames()}`);
  }
  throw new AdvantagesError('unknown_name', `unknown advantage estimator "${name}"; ${knownNames()}`);
}

/** Whether `name` resolves to an estimator (registered, or BASELINE+WEIGHTING of registered parts). */
export function hasEstimator(name: string): boolean {
  try {
    resolve(name);
    return true;
  } catch (err) {
    if ((err as AdvantagesError).code === 'unknown_name') return false;
    throw err;
  }
}

/** What `getEstimator`'s `unknown_name` error lists: the registered estimators, baselines and weightings. */
export function knownNames(): string {
  return `known estimators: ${estimators.names().join(', ')}; or BASELINE+WEIGHTING with baselines ${baselines.names().join(', ')} and weightings ${weightings.names().join(', ')}`;
}

/** `registry.register(item)`, with core's registry errors (`name_taken`, a missing name) as this package's. */
function register<T extends { readonly name: string }>(registry: Registry<T>, item: T): T {
  try {
    return registry.register(item);
  } catch (err) {
    if (isRlvrError(err))
      throw new AdvantagesError(err.code === 'name_taken' ? 'name_taken' : 'invalid_config', err.message, err.location, { cause: err });
    throw err;
  }
}

/** Register a sequence baseline; it composes with every weighting by `name+weighting`. */
// biome-ignore lint/suspicious/noExplicitAny: any option type (the registry stores them type-erased)
export function registerBaseline<B extends SequenceBaseline<any>>(baseline: B): B {
  register(baselines, baseline as SequenceBaseline);
  return baseline;
}

/** Register a token weighting; it composes with every baseline by `baseline+name`. */
// biome-ignore lint/suspicious/noExplicitAny: any option type (the registry stores them type-erased)
export function registerWeighting<W extends TokenWeighting<any>>(weighting: W): W {
  register(weightings, weighting as TokenWeighting);
  return weighting;
}

/** Register a complete estimator under its own name (e.g. one built with `composeEstimator`). */
// biome-ignore lint/suspicious/noExplicitAny: any option type (the registry stores them type-erased)
export function registerEstimator<E extends AdvantageEstimator<any>>(estimator: E): E {
  register(estimators, estimator as AdvantageEstimator);
  return estimator;
}
