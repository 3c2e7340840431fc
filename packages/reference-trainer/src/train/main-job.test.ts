/**
 * The main job (`npm run train`, README) is `rlvr train --config assets/train-long-chain.json`: the
 * config must parse, name the shipped long-chain warm-up with the task it was made on, and be what
 * the root script runs. Its figures are the README's (reproduced by running it); the README's
 * doc-test runs it in a two-step variant.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkCheckpointTask } from '@rlvr/report';
import { describe, expect, test } from 'vitest';
import { parseTrainConfig } from './config.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const FILE = 'packages/reference-trainer/assets/train-long-chain.json';

describe('the main job config', () => {
  test('parses, runs the shipped long-chain warm-up on its own task, and is what npm run train runs', () => {
    const c = parseTrainConfig(JSON.parse(readFileSync(`${ROOT}${FILE}`, 'utf8')), FILE);
    expect(c.family).toBe('long-chain');
    expect(c.checkpoint).toBe('packages/reference-trainer/assets/warmup-long-chain-960');
    // relative to the repository root, where npm run train runs; the asset keeps the run that made it in run/
    // (run/config.json beside the run's checkpoint, as rlvr pretrain writes it): the same long-chain options
    const made = `${ROOT}${c.checkpoint}/run/checkpoint`;
    expect(() => checkCheckpointTask(made, c)).not.toThrow();
    expect(() => checkCheckpointTask(made, { ...c, longChain: { ...c.longChain, maxValue: 999 } })).toThrow('was made on task');
    // three evaluations (start, midpoint, end): the run's learning line needs the midpoint
    expect(c.steps % c.eval.every).toBe(0);
    expect(c.steps / c.eval.every).toBe(2);
    // every completion fits: the longest chain with its box is under 120 tokens
    expect(c.rollout.maxNewTokens).toBe(200);
    expect(c.workers).toBe('auto');
    const script = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).scripts.train as string;
    expect(script).toContain(`train --config ${FILE} --report`);
  });
});
