import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfig } from './config.js';
import { didYouMean, editDistance, nearestName } from './suggest.js';

describe('did you mean', () => {
  it('editDistance counts insertions, deletions, substitutions and adjacent swaps (hand-counted)', () => {
    expect(editDistance('', '')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('stpes', 'steps')).toBe(1);
    expect(editDistance('ca', 'abc')).toBe(3);
    expect(editDistance('seed', 'steps')).toBe(3);
  });

  it('suggests the nearest name within a third of its length, case ignored, or nothing', () => {
    expect(nearestName('stpes', ['seed', 'steps', 'out'])).toBe('steps');
    expect(nearestName('groupsize', ['prompts', 'groupSize', 'maxNewTokens'])).toBe('groupSize');
    expect(nearestName('verbose', ['steps', 'seed'])).toBeUndefined();
    expect(nearestName('ot', ['out', 'seed'])).toBe('out');
    expect(didYouMean('stpes', ['steps'], '--')).toBe(' (did you mean --steps?)');
    expect(didYouMean('x', ['steps'])).toBe('');
  });

  it('a config with an unknown key near a known one names it, through optional, default and nested objects', () => {
    const schema = z
      .object({
        rollout: z
          .object({ groupSize: z.number().default(4), prompts: z.number().default(16) })
          .strict()
          .default({ groupSize: 4, prompts: 16 }),
        items: z.array(z.object({ name: z.string() }).strict()).optional(),
      })
      .strict();
    expect(() => parseConfig(schema, { rollout: { groupsize: 8 } }, 'train')).toThrow(
      'invalid train configuration: unknown key in rollout: groupsize (did you mean groupSize?)',
    );
    expect(() => parseConfig(schema, { items: [{ nmae: 'a' }] }, 'x')).toThrow('unknown key in items.0: nmae (did you mean name?)');
    expect(() => parseConfig(schema, { rolout: {}, zzz: 1 }, 'x')).toThrow('unknown keys: rolout (did you mean rollout?), zzz');
  });
});
