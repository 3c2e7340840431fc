import { describe, expect, test } from 'vitest';
import { ReferenceTrainerError } from '../errors.js';
import { EMBEDDED_CHECKPOINT, parseTrainConfig } from './config.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

describe('parseTrainConfig', () => {
  test('the embedded default: the shipped warm-up checkpoint, GRAIL, a constant learning rate', () => {
    const c = parseTrainConfig({});
    expect(c.estimator).toBe('grail');
    expect(c.checkpoint).toBe(EMBEDDED_CHECKPOINT);
    expect(existsSync(join(c.checkpoint, 'model.safetensors'))).toBe(true);
    expect(c.trainer.schedule).toMatchObject({ type: 'constant' });
    expect(c.trainer.maxCompletionLength).toBe(c.rollout.maxNewTokens);
    expect(c.task).toMatchObject({ minSteps: 1, maxSteps: 2, digits: 1 });
  });

  test('trainer options merge with the defaults; the run seed seeds the trainer; a decaying schedule decays over the steps', () => {
    const c = parseTrainConfig({
      seed: 7,
      steps: 30,
      rollout: { maxNewTokens: 40 },
      trainer: { clipHigh: 0.3, schedule: { type: 'cosine', lr: 1e-4 } },
    });
    expect(c.trainer).toMatchObject({
      seed: 7,
      clipHigh: 0.3,
      maxCompletionLength: 40,
      schedule: { type: 'cosine', lr: 1e-4, totalSteps: 30 },
    });
    expect(parseTrainConfig({ trainer: { clipHigh: 0.3 } }).trainer.schedule).toMatchObject({ type: 'constant', lr: 5e-5 });
  });

  test('unknown keys and bad values are named in one line, with the file', () => {
    let err: unknown;
    try {
      parseTrainConfig({ stepz: 1, rollout: { groupSize: 1 }, trainer: { clipLow: 2 } }, 'run.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ReferenceTrainerError);
    const e = err as ReferenceTrainerError;
    expect(e.code).toBe('invalid_config');
    expect(e.message).toMatch(/^run\.json: invalid train config: /);
    for (const part of ['unknown key: stepz', 'rollout.groupSize', 'trainer.clipLow']) expect(e.message).toContain(part);
    expect(e.message).not.toContain('\n');
    expect(() => parseTrainConfig([])).toThrow('invalid train config: must be a JSON object');
  });
});
