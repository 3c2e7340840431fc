import { describe, expect, test } from 'vitest';
import { parseVariants, variantError, variantInput } from './compare-variants.js';

const errorOf = (f: () => unknown): Error & { location: { file?: string; field?: string } } => {
  try {
    f();
  } catch (err) {
    return err as Error & { location: { file?: string; field?: string } };
  }
  throw new Error('no error');
};

describe('parseVariants', () => {
  test('variants by name; none is {}', () => {
    expect(parseVariants(undefined)).toEqual({});
    expect(parseVariants({ 'grail-both': { estimator: 'grail', estimatorConfig: { symmetry: 'both' } } })).toEqual({
      'grail-both': { estimator: 'grail', estimatorConfig: { symmetry: 'both' } },
    });
  });

  test.each<[unknown, string, string]>([
    [[], 'variants', 'must be an object of variants by name'],
    [{ 'a/b': { estimator: 'grail' } }, 'variants.a/b', 'a variant name is letters, digits and _ . + - only'],
    [{ g: { estimatorConfig: {} } }, 'variants.g.estimator', 'expected string'],
    [
      { g: { estimator: 'grail', trainr: {} } },
      'variants.g.trainr',
      'unknown key (a variant has estimator, estimatorConfig, saliency, trainer)',
    ],
    [{ g: { estimator: 'grail', saliency: 'minibatch' } }, 'variants.g.saliency', 'expected record'],
    [{ g: 'grail' }, 'variants.g', 'expected object'],
  ])('%j: one error naming the variant and the field', (raw, field, message) => {
    const e = errorOf(() => parseVariants(raw, 'cmp.json'));
    expect(e.location).toEqual({ file: 'cmp.json', field });
    expect(e.message).toContain(message);
    expect(e.message.startsWith(`cmp.json, field ${field}: `)).toBe(true);
  });
});

describe('variantInput', () => {
  const base = {
    estimator: 'grail',
    seed: 3,
    estimatorConfig: { wMin: 0.2 },
    saliency: { refresh: 'batch', 'grad-x-emb': { alignment: 'previous', tokenBudget: 4096 } },
    trainer: { epochs: 4, schedule: { lr: 1e-5 } },
  };

  test("the variant's options lie over its estimator's; saliency and trainer merge key by key", () => {
    const v = {
      estimator: 'grail',
      estimatorConfig: { symmetry: 'both' },
      saliency: { 'grad-x-emb': { alignment: 'own' }, box: 'last' },
      trainer: { miniBatches: 4 },
    };
    expect(variantInput(base, v, { grail: { wMin: 0.3, sigmaW: 1 } })).toEqual({
      estimator: 'grail',
      seed: 3,
      estimatorConfig: { wMin: 0.3, sigmaW: 1, symmetry: 'both' },
      saliency: { refresh: 'batch', box: 'last', 'grad-x-emb': { alignment: 'own', tokenBudget: 4096 } },
      trainer: { epochs: 4, miniBatches: 4, schedule: { lr: 1e-5 } },
    });
    // without estimatorConfigs for its estimator: the config's estimatorConfig; nothing given leaves saliency and trainer alone
    expect(variantInput(base, { estimator: 'oar-g' }, {})).toEqual({ ...base, estimator: 'oar-g', estimatorConfig: { wMin: 0.2 } });
  });

  test('variantError: the inner location gives way to the variant field', () => {
    const inner = Object.assign(new Error('field saliency.box: must be one of "first", "last"'), { location: { field: 'saliency.box' } });
    const e = variantError('variants.g.saliency.box', inner, 'cmp.json');
    expect(e.message).toBe('cmp.json, field variants.g.saliency.box: must be one of "first", "last"');
  });
});
