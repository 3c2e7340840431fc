import { describe, expect, test } from 'vitest';
import { ReferenceTrainerError } from '../errors.js';
import { parsePretrainConfig } from './config.js';

describe('parsePretrainConfig', () => {
  test('defaults: a cosine schedule decaying over the run steps', () => {
    const c = parsePretrainConfig({ steps: 40 });
    expect(c.steps).toBe(40);
    expect(c.schedule).toMatchObject({ type: 'cosine', totalSteps: 40, warmupSteps: 30 });
    expect(c.synthetic).toMatchObject({ minSteps: 1, maxSteps: 2, digits: 1, operations: ['add', 'sub'] });
    expect(parsePretrainConfig({ steps: 10, schedule: { type: 'linear', lr: 1e-3 } }).schedule).toMatchObject({
      type: 'linear',
      lr: 1e-3,
      totalSteps: 10,
    });
    expect(parsePretrainConfig({ steps: 10 }).schedule.warmupSteps).toBe(10);
  });

  test('names unknown keys and bad values, with the file', () => {
    let err: unknown;
    try {
      parsePretrainConfig({ steps: -1, modle: {}, model: { hidden_size: 'big', num_attention_heads: 3 } }, 'cfg.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ReferenceTrainerError);
    const e = err as ReferenceTrainerError;
    expect(e.code).toBe('invalid_config');
    expect(e.message).toMatch(/^cfg\.json: invalid pretrain config: /);
    expect(e.message).toContain('unknown key: modle');
    expect(e.message).toContain('steps');
    expect(e.message).toContain('model.hidden_size');
    expect(e.message).not.toContain('\n');
  });

  test('the task family: arith by default; long-chain with its own options; an unknown one lists the families', () => {
    expect(parsePretrainConfig({}).family).toBe('arith');
    const c = parsePretrainConfig({ family: 'long-chain', longChain: { maxSteps: 6 } });
    expect(c.family).toBe('long-chain');
    expect(c.longChain).toMatchObject({ minSteps: 4, maxSteps: 6, minDigits: 2, maxDigits: 3, spacedDigits: true });
    expect(() => parsePretrainConfig({ family: 'long' })).toThrow(/family: must be one of "arith", "long-chain" \(got "long"\)/);
    expect(() => parsePretrainConfig({ family: 'long-chain', longChain: { minSteps: 9 } })).toThrow(
      /longChain\.minSteps: minSteps must not exceed maxSteps/,
    );
  });

  test('heads must group evenly', () => {
    expect(() => parsePretrainConfig({ model: { num_attention_heads: 4, num_key_value_heads: 3 } })).toThrow(
      /model\.num_key_value_heads: num_attention_heads must be a multiple of num_key_value_heads/,
    );
  });
});
