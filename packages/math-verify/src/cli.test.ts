/** The built `rlvr-verify` binary, run as a child process on real files and pipes. */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const SLOW = '\\boxed{\\sum_{k=1000}^{3000} k!}';
const run = (args: string[], input?: string) => spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', timeout: 90_000 });
const lines = (s: string) =>
  s
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const jsonl = (rows: unknown[]) => rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
const scratch = () => mkdtempSync(join(tmpdir(), 'rlvr-verify-'));
/** One line on stderr, no stack frames. */
const oneLine = (stderr: string) => {
  expect(stderr).not.toMatch(/node:internal|node:events|^\s+at /m);
  return stderr.trim();
};

describe('rlvr-verify: grading', () => {
  it('grades a file in order, keeps every input field, gives bad lines an error row, and exits 1 for them', () => {
    const dir = scratch();
    const input = join(dir, 'in.jsonl');
    const output = join(dir, 'out.jsonl');
    writeFileSync(
      input,
      '\ufeff' +
        jsonl([
          { id: 'a', gold: '\\frac{1}{2}', pred: 'so \\boxed{0.5}' },
          'not json',
          { id: 'c', gold: true, pred: '\\boxed{3}' },
          '',
          { id: 'd', gold: '7', pred: 'I think 7' },
          { id: 'e', gold: '1', pred: '\\boxed{1}. Checking again carefully, we get \\boxed{2}' },
          [1, 2],
        ]),
    );
    const r = run([input, '-o', output, '--concurrency', '2', '--timeout-ms', '5000']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(oneLine(r.stderr)).toBe(`rlvr-verify: 6 rows, 3 bad, 0 timed out, written to ${output}`);
    expect(lines(readFileSync(output, 'utf8'))).toEqual([
      { id: 'a', gold: '\\frac{1}{2}', pred: 'so \\boxed{0.5}', equal: true, reason: 'exact', extracted: '0.5' },
      { line: 2, equal: false, reason: 'error', extracted: null, error: expect.stringMatching(/in\.jsonl:2: not JSON: /) },
      {
        line: 3,
        equal: false,
        reason: 'error',
        extracted: null,
        error: expect.stringMatching(/in\.jsonl:3, field gold: must be a string or a number \(got boolean\)$/),
      },
      { id: 'd', gold: '7', pred: 'I think 7', equal: false, reason: 'no_answer', extracted: null },
      { id: 'e', gold: '1', pred: expect.any(String), equal: false, reason: expect.stringMatching(/differ/), extracted: '2' },
      {
        line: 7,
        equal: false,
        reason: 'error',
        extracted: null,
        error: expect.stringMatching(/in\.jsonl:7: a row must be a JSON object \(got an array\)$/),
      },
    ]);
    expect(readdirSync(dir).sort()).toEqual(['in.jsonl', 'out.jsonl']); // no temp file left behind
  });

  it('grades a numeric gold as rlvr train and the reward server do (its text), and keeps it a number in the row', () => {
    const rows = [
      { gold: 72, pred: 'so \\boxed{72}' },
      { gold: 72, pred: 'so \\boxed{73}' },
      { gold: 0.5, pred: 'so \\boxed{\\frac12}' },
      { gold: -3, pred: 'so \\boxed{-3}' },
      { gold: 1e21, pred: 'so \\boxed{10^{21}}' },
      { gold: 1.5e-7, pred: 'so \\boxed{0.00000015}' },
      { gold: [72], pred: 'so \\boxed{72}' },
    ];
    const r = run([], jsonl(rows));
    expect(r.status).toBe(1);
    const out = lines(r.stdout);
    expect(out.map((x) => x.equal)).toEqual([true, false, true, true, true, true, false]);
    expect(out[0]).toEqual({ gold: 72, pred: 'so \\boxed{72}', equal: true, reason: 'same_text', extracted: '72' });
    expect(out[6]?.error).toMatch(/<stdin>:7, field gold: must be a string or a number \(got an array\)$/);
  });

  it('exits 0 when every row is graded, and 1 when every line is bad', () => {
    expect(run([], jsonl([{ gold: '1', pred: '\\boxed{1}' }])).status).toBe(0);
    const bad = run([], jsonl(['{', { gold: 1 }, { pred: 'x' }]));
    expect(bad.status).toBe(1);
    expect(lines(bad.stdout).map((x) => x.reason)).toEqual(['error', 'error', 'error']);
    expect(oneLine(bad.stderr)).toBe('rlvr-verify: 3 rows, 3 bad, 0 timed out');
  });

  it('reads stdin, honours --extract first and --fallbacks, and times out slow rows', () => {
    const rows = [
      { gold: '1', pred: '\\boxed{1}. Checking again carefully, we get \\boxed{2}' },
      { gold: '7', pred: 'I think 7' },
    ];
    const r = run(['--extract', 'first', '--fallbacks', '--concurrency', '1'], jsonl(rows));
    expect(r.status).toBe(0);
    expect(lines(r.stdout).map((x) => [x.equal, x.reason])).toEqual([
      [true, 'same_text'],
      [true, 'same_text'],
    ]);
    // the slow row alone, so that no quick row shares its short budget: SLOW takes over a second of CPU
    // (30x the budget) and a loaded machine only makes it slower
    const slow = run(['--timeout-ms', '50', '--concurrency', '1'], jsonl([{ gold: '1', pred: SLOW }]));
    expect(slow.status).toBe(0);
    expect(lines(slow.stdout).map((x) => [x.equal, x.reason])).toEqual([[false, 'timeout']]);
    expect(slow.stderr).toMatch(/1 rows, 0 bad, 1 timed out/);
  });

  it('grades only after --reasoning-delimiter, rounds with --round-to, and reads other field names', () => {
    const think = run(
      ['--reasoning-delimiter', '</think>'],
      jsonl([
        { gold: '42', pred: '<think> \\boxed{42} </think> no box after' },
        { gold: '42', pred: '<think> ... </think> \\boxed{42}' },
      ]),
    );
    expect(lines(think.stdout).map((x) => x.reason)).toEqual(['no_answer', 'same_text']);
    const rows = jsonl([{ answer: '\\frac{2}{3}', response: '\\boxed{0.67}' }]);
    expect(lines(run(['--gold-field', 'answer', '--pred-field', 'response'], rows).stdout)[0]).toMatchObject({ equal: false });
    expect(lines(run(['--gold-field', 'answer', '--pred-field', 'response', '--round-to', '2'], rows).stdout)[0]).toMatchObject({
      equal: true,
      answer: '\\frac{2}{3}',
    });
  });

  it('reads the problem from --problem-field (unit, rounding, form with --strict-form), flags limits, and refuses a non-string problem', () => {
    const rows = jsonl([
      { gold: '60', pred: '\\boxed{60\\text{ inches}}', question: 'How many feet long is the rope?' },
      { gold: '60', pred: '\\boxed{60}', question: 'How many feet long is the rope?' },
      { gold: '\\pi', pred: '\\boxed{3.14}', question: 'Round to the nearest hundredth.' },
      { gold: '\\frac12', pred: '\\boxed{0.5}', question: 'Express your answer as a common fraction.' },
      { gold: '60', pred: '\\boxed{60\\text{ inches}}' },
      { gold: '60', pred: '\\boxed{60\\text{ inches}}', question: null },
      { gold: '1', pred: `\\boxed{${'('.repeat(200)}1${')'.repeat(200)}}`, question: 'x?' },
      { gold: '60', pred: '\\boxed{60}', question: 7 },
    ]);
    const plain = run([], rows);
    expect(lines(plain.stdout).map((x) => x.equal)).toEqual([true, true, false, true, true, true, false, true]);
    const r = run(['--problem-field', 'question'], rows);
    expect(r.status).toBe(1);
    const out = lines(r.stdout);
    expect(out.map((x) => x.equal)).toEqual([false, true, true, true, true, true, false, false]);
    expect(out[0]!.reason).toBe('unit: the problem asks for foot, the answer is in inch');
    expect(out[6]).toMatchObject({ limit: 'depth', reason: 'pred_unparseable: nesting too deep' });
    expect(out[0]).not.toHaveProperty('limit');
    expect(out[7]).toMatchObject({ line: 8, reason: 'error' });
    expect(out[7]!.error).toBe('<stdin>:8, field question: must be a string or null (got number)');
    const strict = lines(run(['--problem-field', 'question', '--strict-form'], rows).stdout);
    expect(strict[3]).toMatchObject({ equal: false, reason: 'form: the problem asks for a common fraction, the answer has a decimal' });
  });

  it('refuses to overwrite verdict fields a row already has, unless --overwrite', () => {
    const graded = jsonl([{ gold: '2', pred: '\\boxed{2}', equal: false, reason: 'old' }]);
    const r = run([], graded);
    expect(r.status).toBe(1);
    expect(lines(r.stdout)[0]).toMatchObject({
      line: 1,
      reason: 'error',
      error: expect.stringMatching(/<stdin>:1, field equal: the verdict would overwrite it/),
    });
    const again = run(['--overwrite'], graded);
    expect(again.status).toBe(0);
    expect(lines(again.stdout)).toEqual([{ gold: '2', pred: '\\boxed{2}', equal: true, reason: 'same_text', extracted: '2' }]);
  });
});

describe('rlvr-verify: usage and bad input', () => {
  it('exits 2 with the flag named and the usage on bad arguments', () => {
    for (const [args, msg] of [
      [['--extract', 'middle'], /--extract: must be one of first, last \(got "middle"\)/],
      [['--concurrency', '0'], /--concurrency: must be an integer from 1 to 256 \(got "0"\)/],
      [['--concurrency', '300'], /--concurrency: must be an integer from 1 to 256/],
      [['--timeout-ms', '0'], /--timeout-ms: must be an integer from 1 to 600000 \(got "0"\)/],
      [['--timeout-ms', '1e9'], /--timeout-ms: must be an integer from 1 to 600000/],
      [['--rel-tol', '0'], /--rel-tol: must be a number above 0/],
      [['--round-to', 'two'], /--round-to: must be an integer from 0 to 12/],
      [['--bogus'], /Unknown option '--bogus'/],
      [['a.jsonl', 'b.jsonl'], /takes at most one input file/],
    ] as [string[], RegExp][]) {
      const r = run(args, '');
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(msg);
      expect(r.stderr).toMatch(/\n\(rlvr-verify --help lists the options\)\n$/);
      expect(r.stderr).not.toMatch(/concurrency: Too small|invalid pool options/);
    }
  });

  it('exits 1 with one line and writes nothing when the input cannot be read', () => {
    const dir = scratch();
    const r = run([join(dir, 'missing.jsonl'), '-o', join(dir, 'out.jsonl')]);
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toBe(`rlvr-verify: ${join(dir, 'missing.jsonl')}: cannot read: no such file`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('-o into a missing directory, under a regular file, or onto a directory: one line, exit 1, before any work, nothing left', () => {
    const dir = scratch();
    const input = join(dir, 'in.jsonl');
    writeFileSync(input, jsonl([{ gold: '1', pred: '\\boxed{1}' }]));
    writeFileSync(join(dir, 'file'), 'x');
    mkdirSync(join(dir, 'sub'));
    for (const [out, msg] of [
      [join(dir, 'nope', 'out.jsonl'), `cannot write: directory ${join(dir, 'nope')} does not exist`],
      [join(dir, 'file', 'out.jsonl'), `cannot write: ${join(dir, 'file')} is not a directory`],
      [join(dir, 'sub'), `cannot write: ${join(dir, 'sub')} is a directory`],
    ]) {
      const r = run([input, '-o', out as string]);
      expect(r.status, out).toBe(1);
      expect(oneLine(r.stderr)).toBe(`rlvr-verify: ${out}: ${msg}`);
    }
    expect(readdirSync(dir).sort()).toEqual(['file', 'in.jsonl', 'sub']);
    expect(readdirSync(join(dir, 'sub'))).toEqual([]);
  });

  it('writes 3,000+ rows to -o without a MaxListenersExceededWarning', () => {
    const dir = scratch();
    const input = join(dir, 'in.jsonl');
    const output = join(dir, 'out.jsonl');
    const long = 'so the answer is \\boxed{%}. '.repeat(40);
    writeFileSync(
      input,
      jsonl(Array.from({ length: 3500 }, (_, i) => ({ id: i, gold: String(i), pred: long.replaceAll('%', String(i)) }))),
    );
    const r = run([input, '-o', output, '--concurrency', '2']);
    expect(r.status).toBe(0);
    expect(r.stderr).not.toMatch(/MaxListenersExceededWarning|Warning/);
    const out = lines(readFileSync(output, 'utf8'));
    expect(out).toHaveLength(3500);
    expect(out.every((x, i) => x.id === i && x.equal === true)).toBe(true);
  });
});

describe('rlvr-verify: pipes and signals', () => {
  it('exits quietly with status 0 when the reader of its output goes away (| head -1)', () => {
    const dir = scratch();
    const input = join(dir, 'in.jsonl');
    writeFileSync(input, jsonl(Array.from({ length: 5000 }, (_, i) => ({ gold: String(i), pred: `\\boxed{${i}} ${'x'.repeat(200)}` }))));
    const r = spawnSync(
      'bash',
      ['-c', `"${process.execPath}" "${CLI}" "${input}" --concurrency 1 | head -1; echo "status \${PIPESTATUS[0]}" >&2`],
      { encoding: 'utf8', timeout: 90_000 },
    );
    expect(lines(r.stdout)).toHaveLength(1);
    expect(r.stderr.trim()).toBe('status 0');
  });

  it('on Ctrl-C during -o exits 130 and leaves no temporary file', async () => {
    const dir = scratch();
    const input = join(dir, 'in.jsonl');
    const output = join(dir, 'out.jsonl');
    writeFileSync(input, jsonl(Array.from({ length: 20 }, () => ({ gold: '1', pred: SLOW }))));
    const child = spawn(process.execPath, [CLI, input, '-o', output, '--concurrency', '1', '--timeout-ms', '60000'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // The temporary output file exists once the command is under way.
    await expect.poll(() => readdirSync(dir).some((f) => f.endsWith('.tmp')), { timeout: 60_000, interval: 50 }).toBe(true);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(130);
    expect(oneLine(stderr)).toBe('rlvr-verify: interrupted');
    expect(readdirSync(dir)).toEqual(['in.jsonl']);
    expect(existsSync(output)).toBe(false);
  }, 300_000);
});
