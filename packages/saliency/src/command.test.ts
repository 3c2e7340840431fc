import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '@rlvr/core';
import { float32Text, saliencyCommand } from './command.js';
import { logprobsWithGradXEmb } from './grad-x-emb.js';
import { perturbation } from './perturbation.js';
import { TINY_DIR, fixtureBatch, fixtureRows, tinyModel, useBackend } from './test-utils/fixtures.js';

async function run(args: string[]) {
  let out = '';
  let err = '';
  const io = { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: {} };
  const code = await runCommand('rlvr-saliency', saliencyCommand, args, io);
  return { code, out: out === '' ? [] : out.trimEnd().split('\n'), err };
}

describe('rlvr-saliency CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'saliency-cli-'));
  const input = join(dir, 'rows.jsonl');
  const base = ['--model', TINY_DIR, '--in', input, '--backend', 'cpu'];
  beforeAll(async () => {
    await useBackend('cpu');
    // A blank line in the middle: line numbers in errors must still be right.
    const lines = fixtureRows().map((r) => JSON.stringify(r));
    writeFileSync(input, [lines[0], '', ...lines.slice(1)].join('\n') + '\n');
  });

  it('grad-x-emb: one {"scores"} line per row, null for the row without an answer, equal to the library', async () => {
    const r = await run([...base, '--method', 'grad-x-emb', '--alignment', 'own', '--temperature', '0.7']);
    expect(r.code).toBe(0);
    const rows = r.out.map((l) => JSON.parse(l).scores as number[] | null);
    expect(rows.map((s) => (s === null ? null : s.length))).toEqual([10, 8, null, 6]);
    expect(r.err).toMatch(/1 of 4 rows have no answer span/);
    const model = tinyModel();
    const want = await logprobsWithGradXEmb(model, fixtureBatch(), { alignment: 'own', temperature: 0.7 });
    model.dispose();
    const got = rows.flatMap((s, i) => s ?? new Array(i === 2 ? 7 : 0).fill(0));
    expect(Float32Array.from(got)).toEqual(want.scores); // shortest float32 text reads back exactly
  });

  it('perturbation flags reach the backend; --out writes the file atomically', async () => {
    const out = join(dir, 'pert.jsonl');
    const r = await run([...base, '--method', 'perturbation', '--window', '2', '--replacement', '5', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.out).toEqual([]);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).scores as number[] | null);
    const model = tinyModel();
    const want = await perturbation(model, fixtureBatch(), { window: 2, replacement: 5 });
    model.dispose();
    expect(Float32Array.from(rows.flatMap((s) => s ?? new Array(7).fill(0)))).toEqual(want.scores);
    expect(rows[0]!.filter((s) => s > 0)).toHaveLength(2);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('--options reaches the backend like the flags', async () => {
    const a = await run([...base, '--method', 'noisy-kl', '--options', '{"seed": 4, "noiseStd": 0.01}']);
    const b = await run([...base, '--method', 'noisy-kl', '--seed', '4', '--noise-std', '0.01']);
    expect(a.code).toBe(0);
    expect(a.out).toEqual(b.out);
    expect(a.out).not.toEqual((await run([...base, '--method', 'noisy-kl'])).out);
  });

  it('--format advantages writes the rows rlvr-advantages reads (group, reward, length, saliency, spans)', async () => {
    const r = await run([...base, '--method', 'noisy-kl', '--format', 'advantages', '--seed', '1']);
    expect(r.code).toBe(0);
    const src = fixtureRows();
    r.out.forEach((l, i) => {
      const row = JSON.parse(l);
      expect(Object.keys(row)).toEqual(['group', 'reward', 'length', 'saliency', 'spans']);
      expect(row.group).toBe(src[i]!.group);
      expect(row.reward).toBe(src[i]!.reward);
      expect(row.length).toBe(src[i]!.completion.length);
      expect(row.saliency).toHaveLength(row.length);
      expect(row.spans).toEqual(src[i]!.spans);
      for (const s of row.saliency) expect(s).toBeGreaterThanOrEqual(0);
    });
  });

  it('bad input names the file and line; bad usage exits 2', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"prompt": [1], "completion": [2, 3], "spans": null}\n\n{"prompt": [1], "completion": [2, 999], "spans": null}\n');
    let r = await run(['--model', TINY_DIR, '--in', bad, '--backend', 'cpu', '--method', 'grad-x-emb']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${bad}:3, field completion: completion[1] = 999 is not a token id in [0, 300)`);
    writeFileSync(bad, '{"prompt": [1], "completion": [2, 3], "spans": {"open": [0, 1], "content": [1, 2], "close": [2, 4]}}\n');
    r = await run(['--model', TINY_DIR, '--in', bad, '--backend', 'cpu', '--method', 'grad-x-emb']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${bad}:1, field spans: close span ends at 4 but the completion has 2 tokens`);
    writeFileSync(bad, '{"prompt": [1], "completion": [2, 3], "spans": null}\n');
    r = await run(['--model', TINY_DIR, '--in', bad, '--backend', 'cpu', '--method', 'grad-x-emb', '--format', 'advantages']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${bad}:1, field group: --format advantages needs "group" and "reward"`);
    writeFileSync(
      bad,
      `{"prompt": [1], "completion": [2, 3], "spans": null}\n{"prompt": [1, 2], "completion": [${Array(63).fill(5).join(',')}], "spans": null}\n`,
    );
    r = await run(['--model', TINY_DIR, '--in', bad, '--backend', 'cpu', '--method', 'grad-x-emb']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `rlvr-saliency: ${bad}:2, field completion: prompt and completion are 65 tokens, more than the model's context of 64 (max_position_embeddings)\n`,
    );
    r = await run([...base, '--method', 'grad-x-emb', '--out', join(dir, 'nope', 'x.jsonl')]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`rlvr-saliency: ${join(dir, 'nope', 'x.jsonl')}: cannot write: directory ${join(dir, 'nope')} does not exist\n`);
  });

  it('bad usage exits 2 naming the flag; the methods come from the registry', async () => {
    let r = await run([...base, '--method', 'saliency-magic']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--method: must be one of grad-x-emb, noisy-kl, perturbation (got "saliency-magic")');
    // one line naming --help follows, not the whole help
    expect(r.err.split('\n').slice(1)).toEqual(['(rlvr-saliency --help lists the options)', '']);
    r = await run([...base, '--mehtod', 'grad-x-emb']);
    expect(r.code).toBe(2);
    expect(r.err).toBe("rlvr-saliency: Unknown option '--mehtod' (did you mean --method?)\n(rlvr-saliency --help lists the options)\n");
    r = await run([...base, '--method', 'grad-x-emb', '--window', '3']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--window: applies to --method perturbation only');
    r = await run([...base, '--method', 'grad-x-emb', '--alignment', 'next']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--alignment: must be one of "previous", "own" (got "next")');
    r = await run([...base, '--method', 'noisy-kl', '--options', '{"noiseStd": -1}']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^rlvr-saliency: --options: noiseStd: /);
    r = await run([...base, '--method', 'noisy-kl', '--options', '{"noize": 1}']);
    expect(r.err).toMatch(/^rlvr-saliency: --options: unknown key: noize/);
    r = await run(['--in', input, '--method', 'noisy-kl']);
    expect(r.err).toMatch(/^rlvr-saliency: --model: required/);
  });

  it('float32Text gives the shortest decimal that reads back as the same float32', () => {
    for (const v of [0.1, 1 / 3, 1e-8, 123456.789, 3.4e38]) {
      const f = Math.fround(v);
      const s = float32Text(f);
      expect(Math.fround(Number(s))).toBe(f);
      expect(s.length).toBeLessThanOrEqual(String(f).length);
    }
    expect(float32Text(Math.fround(0.1))).toBe('0.1');
  });
});
