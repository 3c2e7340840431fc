import { describe, expect, test } from 'vitest';
import { firstSeeds, listFlag, looksFlag, primaryFlag, seedList, seedsFlag, thresholdFlag } from './compare-flags.js';

const usage = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return [(e as { code?: string }).code, (e as Error).message];
  }
  return null;
};

describe('compare flags', () => {
  test('lists and seeds: names in order, counts from the config seed, each bad value a usage error naming the flag', () => {
    expect(listFlag('estimators', 'grpo, grail')).toEqual(['grpo', 'grail']);
    expect(usage(() => listFlag('estimators', 'grpo,,grail'))).toEqual(['usage', expect.stringContaining('comma-separated list')]);
    expect(usage(() => listFlag('estimators', 'grpo,grpo'))).toEqual(['usage', expect.stringContaining('lists "grpo" twice')]);
    expect(seedsFlag('3', 5)).toEqual([5, 6, 7]);
    expect(seedsFlag('3', undefined)).toEqual([0, 1, 2]);
    expect(seedsFlag('0,5,9', 5)).toEqual([0, 5, 9]);
    expect(firstSeeds(2, -1)).toEqual([0, 1]);
    expect(usage(() => seedsFlag('0,x', 0))?.[0]).toBe('usage');
    expect([seedList([0, 1, 2, 3]), seedList([3, 7, 9]), seedList([15]), seedList([4, 5])]).toEqual([
      'seeds 0-3',
      'seeds 3, 7, 9',
      'seed 15',
      'seeds 4, 5',
    ]);
  });

  test('primary, looks and threshold', () => {
    expect(primaryFlag('grail:dr-grpo', ['dr-grpo', 'grail'])).toEqual(['grail', 'dr-grpo']);
    expect(usage(() => primaryFlag('grail:grail', ['grail']))?.[1]).toContain('two different estimators');
    expect(usage(() => primaryFlag('gar:grail', ['grail']))?.[1]).toContain('"gar" is not among the estimators (grail)');
    expect(looksFlag(10, 2)).toEqual([5, 10]);
    expect(usage(() => looksFlag(2, 5))?.[1]).toContain('(--max-seeds 2)');
    expect(thresholdFlag('+5%')).toEqual({ kind: 'gain', value: 0.05 });
    expect(usage(() => thresholdFlag('lots'))?.[0]).toBe('usage');
  });
});
