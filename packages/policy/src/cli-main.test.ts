import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './cli-main.js';
import { TINY_DIR } from './test-utils/fixtures.js';

async function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
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
    expect(r.err).toMatch(/tfjs backend: cpu/);
  });

  it('logprobs scores each completion token and writes one line per row', async () => {
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
    const saved = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l).logprobs as number[]);
    saved.forEach((l, i) => l.forEach((v, j) => expect(v).toBeCloseTo(lines[i][j], 5)));
  });

  it('names file and line for out-of-range ids, too-long sequences and malformed rows', async () => {
    const input = join(dir, 'bad.jsonl');
    writeFileSync(input, '{"prompt": [1], "completion": [2]}\n{"prompt": [1], "completion": [300]}\n');
    let r = await run(['logprobs', '--model', TINY_DIR, '--in', input, '--backend', 'cpu']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${input}:2: completion[0] = 300 is not a token id in [0, 300)`);
    writeFileSync(input, `{"prompt": [1], "completion": [${Array(64).fill(2).join(',')}]}\n`);
    r = await run(['logprobs', '--model', TINY_DIR, '--in', input, '--backend', 'cpu']);
    expect(r.err).toContain(`${input}:1: sequence has 65 tokens (prompt 1 + completion 64), more than the model's maximum 64`);
    writeFileSync(input, '{"prompt": [1]}\n');
    r = await run(['logprobs', '--model', TINY_DIR, '--in', input, '--backend', 'cpu']);
    expect(r.err).toMatch(/bad\.jsonl:1: completion: /);
  });

  it('usage errors exit 2', async () => {
    expect((await run(['frobnicate', '--model', 'x'])).code).toBe(2);
    expect((await run(['info'])).err).toMatch(/--model DIR is required/);
    expect((await run(['info', '--model', TINY_DIR, '--backend', 'gpu'])).err).toMatch(/--backend must be one of auto, tensorflow, wasm, cpu; got gpu/);
    expect((await run(['--help'])).code).toBe(0);
  });
});
