import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { binPath, rlvr, runNode as run } from './test-utils/run-cli.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rlvr-passthrough-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('rlvr verify / rlvr advantages', () => {
  test('rlvr verify is rlvr-verify: same output and exit code', async () => {
    const file = join(root, 'answers.jsonl');
    await writeFile(file, ['{"gold":"0.5","pred":"so \\\\boxed{\\\\frac{1}{2}}"}', '{"gold":"3","pred":"\\\\boxed{4}"}', ''].join('\n'));
    const viaRlvr = await rlvr('verify', file);
    const direct = await run(binPath('@rlvr/math-verify', 'rlvr-verify'), [file]);
    expect(viaRlvr).toEqual(direct);
    expect(viaRlvr.code).toBe(0);
    for (const args of [['-h'], ['--nope'], [join(root, 'missing.jsonl')]])
      expect(await rlvr('verify', ...args)).toEqual(await run(binPath('@rlvr/math-verify', 'rlvr-verify'), args));
    expect(
      viaRlvr.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { equal: boolean }).equal),
    ).toEqual([true, false]);
  });

  test('rlvr advantages is rlvr-advantages, errors and exit codes included', async () => {
    const examples = join(binPath('@rlvr/advantages', 'rlvr-advantages'), '..', '..', 'examples', 'rollouts.jsonl');
    const args = ['--estimator', 'grail', '--in', examples];
    const viaRlvr = await rlvr('advantages', ...args);
    expect(viaRlvr).toEqual(await run(binPath('@rlvr/advantages', 'rlvr-advantages'), args));
    expect(viaRlvr.code).toBe(0);
    expect(viaRlvr.stdout.length).toBeGreaterThan(0);
    const bad = await rlvr('advantages', '--estimator', 'nope', '--in', examples);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^rlvr-advantages: unknown advantage estimator "nope"/);
  });
});
