import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommands } from '@rlvr/core';
import { policyCommands } from './commands.js';
import { TINY_DIR } from './test-utils/fixtures.js';

async function run(args: string[]) {
  let out = '';
  let err = '';
  const io = { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: {} };
  const code = await runCommands('rlvr-policy', policyCommands, args, io);
  return { code, out: out.trimEnd(), err };
}

describe('rlvr-policy CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'policy-cli-'));

  it('info prints config, parameter count and backend', async () => {
    const r = await run(['info', '--model', TINY_DIR, '--backend', 'cpu']);
    expect(r.code).toBe(0);
    const info = JSON.parse(r.out);
    expect(info.backend).toBe('cpu');
    // 2 x 300 x 64 (embed, head) + 64 (norm) + 2 layers x (2x64 + 64x64 + 2x32x64 + 64x64 + 2x16 + 3x128x64)
    expect(info.parameters).toBe(2 * 300 * 64 + 64 + 2 * (128 + 4096 + 4096 + 4096 + 32 + 24576));
    expect(info.config.hidden_size).toBe(64);
    expect(r.err).toMatch(/^tfjs backend: cpu/);
  });

  it('logprobs scores each completion token and writes one line per row, to stdout or atomically to --out', async () => {
    const input = join(dir, 'rows.jsonl');
    writeFileSync(input, '{"prompt": [1, 2, 3], "completion": [4, 5]}\n\n{"prompt": [7], "completion": [8, 9, 10]}\n');
    const r = await run(['logprobs', '--model', TINY_DIR, '--in', input, '--backend', 'cpu', '--batch-size', '1']);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n').map((l) => JSON.parse(l).logprobs as number[]);
    expect(lines.map((l) => l.length)).toEqual([2, 3]);
    for (const l of lines) for (const v of l) expect(v).toBeLessThan(0);
    const out = join(dir, 'out.jsonl');
    const r2 = await run(['logprobs', '--model', TINY_DIR, '--in', input, '--backend', 'cpu', '--out', out]);
    expect(r2.code).toBe(0);
    expect(r2.out).toBe('');
    const saved = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).logprobs as number[]);
    saved.forEach((l, i) => l.forEach((v, j) => expect(v).toBeCloseTo(lines[i]![j]!, 5)));
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('bad input exits 1 with one line naming the file and line', async () => {
    const input = join(dir, 'bad.jsonl');
    writeFileSync(input, '{"prompt": [1], "completion": [2]}\n\n{"prompt": [1], "completion": [300]}\n');
    let r = await run(['logprobs', '--model', TINY_DIR, '--in', input, '--backend', 'cpu']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`rlvr-policy logprobs: ${input}:3: completion[0] = 300 is not a token id in [0, 300)\n`);
    writeFileSync(input, `{"prompt": [1], "completion": [${Array(64).fill(2).join(',')}]}\n`);
    r = await run(['logprobs', '--model', TINY_DIR, '--in', input, '--backend', 'cpu']);
    expect(r.err).toContain(`${input}:1: sequence has 65 tokens (prompt 1 + completion 64), more than the model's maximum 64`);
    writeFileSync(input, '{"prompt": [1]}\n');
    r = await run(['logprobs', '--model', TINY_DIR, '--in', input, '--backend', 'cpu']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/bad\.jsonl:1: completion: /);
    writeFileSync(input, '{"prompt": [1], "completion": [2]\n');
    r = await run(['logprobs', '--model', TINY_DIR, '--in', input, '--backend', 'cpu']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/bad\.jsonl:1: /);
    r = await run([
      'logprobs',
      '--model',
      TINY_DIR,
      '--in',
      join(dir, 'rows.jsonl'),
      '--backend',
      'cpu',
      '--out',
      join(dir, 'nope', 'x.jsonl'),
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`cannot write: directory ${join(dir, 'nope')} does not exist`);
  });

  it('usage errors exit 2 naming the flag, then one line naming --help', async () => {
    expect((await run(['frobnicate', '--model', 'x'])).code).toBe(2);
    let r = await run(['info']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^rlvr-policy info: --model: required \(a model directory\)\n\(rlvr-policy info --help lists the options\)\n$/);
    r = await run(['info', '--model', TINY_DIR, '--backend', 'gpu']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--backend: must be one of auto, tensorflow, webgpu, wasm, cpu (got "gpu")');
    r = await run(['logprobs', '--model', TINY_DIR, '--in', 'x', '--temperature', '0']);
    expect(r.err).toContain('--temperature: must be a number > 0 (got "0")');
    expect((await run(['--help'])).code).toBe(0);
    expect((await run(['logprobs', '--help'])).out).toMatch(/^usage: rlvr-policy logprobs/);
  });
});
