import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ReferenceTrainerError } from '../errors.js';
import { compareRunDir, runCompare } from './run.js';
import type { CompareOptionsInput } from '@rlvr/report';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rlvr-compare-run-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** runCompare's error, which must come before any run directory exists. */
async function failure(options: Partial<CompareOptionsInput>): Promise<ReferenceTrainerError> {
  const out = join(root, 'never');
  const err = await runCompare({ estimators: ['grpo', 'grail'], seeds: [0], out, ...options }).then(
    () => {
      throw new Error('runCompare succeeded');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ReferenceTrainerError);
  expect(existsSync(out)).toBe(false);
  return err as ReferenceTrainerError;
}

describe('runCompare checks before any training', () => {
  test('run directories: OUT/ESTIMATOR/seed-S, unsafe characters replaced', () => {
    expect(compareRunDir('out', 'grpo+grail', 3)).toBe(join('out', 'grpo+grail', 'seed-3'));
    expect(compareRunDir('out', 'my/est', 0)).toBe(join('out', 'my_est', 'seed-0'));
  });

  test('options, per-estimator options and train config fields are named', async () => {
    expect(await failure({ seeds: [] })).toMatchObject({
      code: 'invalid_options',
      message: expect.stringMatching(/^invalid compare options: .*seeds/),
    });
    expect(await failure({ estimators: ['a/b', 'a_b'] })).toMatchObject({
      code: 'invalid_options',
      message: `two estimators map to one directory "${join(root, 'never', 'a_b', 'seed-0')}"`,
    });
    // estimatorConfigs: options by estimator name, each checked by that estimator's schema
    expect(await failure({ config: { estimatorConfigs: { 'oar-g': {} } }, configFile: 'c.json' })).toMatchObject({
      code: 'invalid_config',
      message: 'c.json, field estimatorConfigs: estimatorConfigs names "oar-g", not among the estimators compared (grpo, grail)',
    });
    const bad = await failure({ config: { estimatorConfigs: { grail: { wMax: 'big' } } } });
    expect(bad.code).toBe('invalid_config');
    expect(bad.message).toMatch(/^field estimatorConfigs: options of estimator grail: .*wMax/);
    // a shared estimatorConfig that only one estimator accepts fails for the other, naming it
    expect((await failure({ config: { estimatorConfig: { wMax: 3 } } })).message).toMatch(
      /^field estimatorConfig: options of estimator grpo: .*wMax.* \(estimatorConfig applies to every estimator compared: give options by name in estimatorConfigs/,
    );
    // ... which estimatorConfigs fixes: the checks pass on to the run directories, where an existing run is refused
    const out = join(root, 'taken');
    await mkdir(join(out, 'grail', 'seed-0'), { recursive: true });
    await writeFile(join(out, 'grail', 'seed-0', 'metrics.jsonl'), '');
    await expect(
      runCompare({
        estimators: ['grpo', 'grail'],
        seeds: [0],
        out,
        config: { estimatorConfig: { wMax: 3 }, estimatorConfigs: { grpo: {} } },
      }),
    ).rejects.toMatchObject({
      code: 'invalid_options',
      message: `${out}: ${join(out, 'grail', 'seed-0', 'metrics.jsonl')} exists: pick another --out or pass --resume (a run directory is never overwritten)`,
    });
    expect(await failure({ config: { stepz: 3 } })).toMatchObject({
      code: 'invalid_config',
      message: expect.stringContaining('unknown key: stepz'),
    });
  });
});
