/**
 * One set of dataset preset names for `rlvr train` and `rlvr eval` (issue 42): the benchmark names
 * are aliases, and an unknown name lists the valid ones. Through the built bin.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { rlvr } from '../test-utils/run-cli.js';

const LIST =
  'deepmath, math500, aime (or aime24), amc (or amc23), college_math (or college), minerva_math (or minerva), olympiadbench (or olympiad), gsm8k, synthetic';

let root: string;
let file: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rlvr-presets-'));
  // rows in the synthetic layout: read with the aime layout they lack its `problem` field, which
  // proves which layout an alias resolved to before any training starts
  file = join(root, 'rows.jsonl');
  await writeFile(file, '{"question": "1 + 1?", "answer": "2"}\n');
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('dataset preset names through the bin', () => {
  test('rlvr train: an unknown data.format lists the presets and their aliases in one line, exit 2, nothing written', async () => {
    const out = join(root, 'train-unknown');
    const r = await rlvr('train', '--data.train', file, '--data.format', 'aime2024', '--out', out);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(
      `rlvr train: --data.format: unknown dataset preset "aime2024": the presets are ${LIST} (got "aime2024")`,
    );
    expect(existsSync(out)).toBe(false);
  });

  test.each([
    ['aime24', 'aime'],
    ['aime', 'aime'],
  ])('rlvr train: data.format %s reads the %s layout', async (name) => {
    const out = join(root, `train-${name}`);
    const r = await rlvr('train', '--data.train', file, '--data.format', name, '--out', out);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}:1, field problem: expected a non-empty string question, got nothing (field missing)`);
    expect(existsSync(out)).toBe(false);
  });

  test('rlvr eval: --preset aime24 and aime read one layout; an unknown preset lists the valid names', async () => {
    for (const name of ['aime24', 'aime']) {
      const r = await rlvr('eval', '--model', join(root, 'no-model'), '--dataset', file, '--preset', name, '--out', join(root, 'e.json'));
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(
        `${file}:1, field problem: expected a non-empty string question, got nothing (field missing) (read as preset aime)`,
      );
    }
    const r = await rlvr('eval', '--model', join(root, 'no-model'), '--dataset', file, '--preset', 'minerva-math');
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(
      `rlvr eval: --preset: unknown preset "minerva-math": the presets are ${LIST}, or a field mapping {"question": ..., "answer": ...}`,
    );
  });
});
