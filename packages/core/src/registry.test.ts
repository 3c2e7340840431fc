import { describe, expect, it } from 'vitest';
import { Registry } from './registry.js';
import { Signals } from './signals.js';
import { parseConfig } from './config.js';
import { CoreError } from './errors.js';
import { z } from 'zod';

describe('Registry', () => {
  it('registers, looks up, and lists names', () => {
    const r = new Registry<{ name: string; f: () => number }>('widget');
    const a = { name: 'a', f: () => 1 };
    r.register(a);
    r.register(a); // same object again: harmless
    r.register({ name: 'c', f: () => 3 });
    expect(r.get('a')).toBe(a);
    expect(r.has('b')).toBe(false);
    expect(r.names()).toEqual(['a', 'c']);
  });

  it('refuses a taken name with another implementation and lists known names for unknown ones', () => {
    const r = new Registry<{ name: string }>('advantage estimator');
    r.register({ name: 'grpo' });
    r.register({ name: 'grail' });
    expect(() => r.register({ name: 'grpo' })).toThrow('advantage estimator "grpo" is already registered with another implementation');
    try {
      r.get('gral');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(CoreError);
      expect((e as CoreError).code).toBe('unknown_name');
      expect((e as CoreError).message).toContain('unknown advantage estimator "gral"; known: grail, grpo');
    }
  });
});

describe('Signals', () => {
  it('checks lengths and names who needs a missing signal', () => {
    const s = new Signals(3, { 'saliency.gradXEmb': new Float32Array(3) });
    expect(s.names()).toEqual(['saliency.gradXEmb']);
    expect(() => s.set('x', new Float32Array(2))).toThrow('signal x has 2 values, expected 3 (one per completion token)');
    expect(() => s.set('x', [1, 2, 3] as never)).toThrow(/must be a Float32Array/);
    expect(() => s.get('saliency.noisyKl', 'estimator oar-g')).toThrow(
      'estimator oar-g needs signal saliency.noisyKl; available: saliency.gradXEmb',
    );
  });
});

describe('parseConfig', () => {
  const schema = z
    .object({ sigmaW: z.number().positive().default(0.5), symmetry: z.enum(['both', 'correct', 'wrong']).default('wrong') })
    .strict();

  it('fills defaults', () => {
    expect(parseConfig(schema, undefined, 'weighting grail')).toEqual({ sigmaW: 0.5, symmetry: 'wrong' });
  });

  it('names each bad field, the allowed values and unknown keys', () => {
    expect(() => parseConfig(schema, { sigmaW: -1, symmetry: 'all' }, 'weighting grail')).toThrow(
      'invalid weighting grail configuration: sigmaW: Too small: expected number to be >0 (got -1); symmetry: must be one of "both", "correct", "wrong" (got "all")',
    );
    expect(() => parseConfig(schema, { sigmaw: 1 }, 'weighting grail')).toThrow(/unknown key: sigmaw/);
  });
});
