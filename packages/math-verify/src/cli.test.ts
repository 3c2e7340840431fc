/** The built `rlvr-verify` binary, run as a child process on real files and pipes. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const run = (args: string[], input?: string) => spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', timeout: 60_000 });
const lines = (s: string) => s.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('rlvr-verify', () => {
  it('grades a file in order, passes other fields through, and gives bad lines an error row', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlvr-verify-'));
    const input = join(dir, 'in.jsonl');
    const output = join(dir, 'out.jsonl');
    writeFileSync(
      input,
      [
        JSON.stringify({ id: 'a', gold: '\\frac{1}{2}', pred: 'so \\boxed{0.5}' }),
        'not json',
        JSON.stringify({ id: 'c', gold: 3 }),
        '',
        JSON.stringify({ id: 'd', gold: '7', pred: 'I think 7' }),
        JSON.stringify({ id: 'e', gold: '1', pred: '\\boxed{1}. Checking again carefully, we get \\boxed{2}' }),
      ].join('\n') + '\n',
    );
    const r = run([input, '-o', output, '--concurrency', '2', '--timeout-ms', '5000']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/6 lines, 2 bad, 0 timed out/);
    const out = lines(readFileSync(output, 'utf8'));
    expect(out).toEqual([
      { id: 'a', equal: true, reason: 'exact', extracted: '0.5' },
      { line: 2, equal: false, reason: 'error', extracted: null, error: expect.stringMatching(/in\.jsonl:2: invalid JSON/) },
      { line: 3, equal: false, reason: 'error', extracted: null, error: expect.stringMatching(/in\.jsonl:3: field gold must be a string/) },
      { id: 'd', equal: false, reason: 'no_answer', extracted: null },
      { id: 'e', equal: false, reason: expect.stringMatching(/differ/), extracted: '2' },
    ]);
    expect(readdirSync(dir).sort()).toEqual(['in.jsonl', 'out.jsonl']); // no temp file left behind
  });

  it('reads stdin, honours --extract first and --fallbacks, and times out slow rows', () => {
    const rows = [
      { gold: '1', pred: '\\boxed{1}. Checking again carefully, we get \\boxed{2}' },
      { gold: '7', pred: 'I think 7' },
      { gold: '1', pred: '\\boxed{\\sum_{k=1000}^{3000} k!}' },
    ];
    const r = run(['--extract', 'first', '--fallbacks', '--timeout-ms', '100', '--concurrency', '1'], rows.map((x) => JSON.stringify(x)).join('\n'));
    expect(r.status).toBe(0);
    expect(lines(r.stdout).map((x) => [x.equal, x.reason])).toEqual([
      [true, 'same_text'],
      [true, 'same_text'],
      [false, 'timeout'],
    ]);
  });

  it('grades only after --reasoning-delimiter', () => {
    const rows = [
      { gold: '42', pred: '<think> \\boxed{42} </think> no box after' },
      { gold: '42', pred: '<think> ... </think> \\boxed{42}' },
      { gold: '42', pred: '<think> never closed \\boxed{42}' },
    ];
    const r = run(['--reasoning-delimiter', '</think>'], rows.map((x) => JSON.stringify(x)).join('\n'));
    expect(r.status).toBe(0);
    expect(lines(r.stdout).map((x) => [x.equal, x.reason])).toEqual([
      [false, 'no_answer'],
      [true, 'same_text'],
      [false, 'no_reasoning_end'],
    ]);
  });

  it('exits 1 and writes nothing when the input cannot be read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlvr-verify-'));
    const r = run([join(dir, 'missing.jsonl'), '-o', join(dir, 'out.jsonl')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/ENOENT/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('exits 2 with usage on bad arguments', () => {
    const r = run(['--extract', 'middle']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--extract must be first or last/);
    expect(r.stderr).toMatch(/usage: rlvr-verify/);
  });
});
