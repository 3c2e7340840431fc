import { describe, expect, it } from 'vitest';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommands } from '@rlvr/core';
import { rolloutCommands } from './commands.js';
import { MAX_SYNTH_COUNT } from './synth.js';
import { labelCompletion, loadTasks, longChainGenerator, syntheticGenerator } from '@rlvr/tasks';

const runCli = (argv: string[], io: Parameters<typeof runCommands>[3]) => runCommands('rlvr-rollout', rolloutCommands, argv, io);

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) } }, out, err };
}

// ids: 0 "\", 1 "boxed", 2 "{", 3 "1", 4 "4", 5 "}", 6 "So ", 7 "{1", 8 EOS
const VOCAB = { encoding: 'utf8', tokens: ['\\', 'boxed', '{', '1', '4', '}', 'So ', '{1', '<eos>'], special: [8] };

async function setup(rows: string) {
  const dir = await mkdtemp(join(tmpdir(), 'rlvr-spans-'));
  await writeFile(join(dir, 'vocab.json'), JSON.stringify(VOCAB));
  await writeFile(join(dir, 'in.jsonl'), rows);
  return dir;
}

describe('rlvr-rollout spans', () => {
  it('writes one spans row per completion row, in order', async () => {
    const dir = await setup(
      '{"completion": [6, 0, 1, 2, 3, 4, 5, 8]}\n\n{"completion": [6, 3]}\n{"completion": [0, 1, 7, 4, 5], "extra": 1}\n',
    );
    const { io: x, out, err } = io();
    const code = await runCli(['spans', '--tokenizer', `vocab:${join(dir, 'vocab.json')}`, '--in', join(dir, 'in.jsonl')], x);
    expect(err.join('')).toBe('');
    expect(code).toBe(0);
    expect(
      out
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { spans: { open: [1, 4], content: [4, 6], close: [6, 7] } },
      { spans: null },
      { spans: { open: [0, 3], content: [3, 4], close: [4, 5] } },
    ]);
  });

  it('writes --out whole, and leaves no file when a row is bad', async () => {
    const dir = await setup('{"completion": [0, 1, 2, 3, 5]}\n{"completion": [0, "x"]}\n');
    const { io: x, err } = io();
    const args = [
      'spans',
      '--tokenizer',
      `vocab:${join(dir, 'vocab.json')}`,
      '--in',
      join(dir, 'in.jsonl'),
      '--out',
      join(dir, 'out.jsonl'),
    ];
    expect(await runCli(args, x)).toBe(1);
    expect(err.join('')).toContain(`${join(dir, 'in.jsonl')}:2, field completion.1: `);
    expect((await readdir(dir)).sort()).toEqual(['in.jsonl', 'vocab.json']);
    await writeFile(join(dir, 'in.jsonl'), '{"completion": [0, 1, 2, 3, 5]}\n');
    expect(await runCli(args, io().io)).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 'out.jsonl'), 'utf8'))).toEqual({ spans: { open: [0, 3], content: [3, 4], close: [4, 5] } });
  });

  it('names the file and line of a token id the vocabulary lacks', async () => {
    const dir = await setup('{"completion": [0]}\n{"completion": [99]}\n');
    const { io: x, err } = io();
    expect(await runCli(['spans', '--tokenizer', `vocab:${join(dir, 'vocab.json')}`, '--in', join(dir, 'in.jsonl')], x)).toBe(1);
    expect(err.join('')).toContain(`in.jsonl:2, field completion: `);
    expect(err.join('')).toContain('token id 99 is not in the vocabulary');
  });

  it('lists known tokenizer kinds for a bad spec', async () => {
    const dir = await setup('{"completion": [1, 2]}\n');
    const { io: x, err } = io();
    expect(await runCli(['spans', '--tokenizer', 'qwen3:/models/x', '--in', join(dir, 'in.jsonl')], x)).toBe(1);
    expect(err.join('')).toBe(
      'rlvr-rollout spans: --tokenizer: unknown tokenizer kind "qwen3" in qwen3:/models/x (known: hf:, model:, pruned:, tiktoken: or a model directory)\n',
    );
  });

  it('reports usage errors with exit code 2', async () => {
    const a = io();
    expect(await runCli(['spans', '--in', 'x'], a.io)).toBe(2);
    expect(a.err.join('')).toBe('rlvr-rollout spans: --tokenizer: is required\n(rlvr-rollout spans --help lists the options)\n');
    const b = io();
    expect(await runCli(['frobnicate'], b.io)).toBe(2);
    expect(b.err.join('')).toContain('unknown command "frobnicate"; known: synth, spans');
    const t = io();
    expect(await runCli(['snyth', '--count', '2'], t.io)).toBe(2);
    expect(t.err.join('')).toBe('rlvr-rollout: unknown command "snyth" (did you mean synth?); known: synth, spans\n');
    const w = io();
    expect(await runCli(['spans', '--tokenizer', 'vocab:x', '--in', 'x', '--which', 'middle'], w.io)).toBe(2);
    expect(w.err.join('')).toContain('rlvr-rollout spans: --which: must be one of last, first (got "middle")');
    const c = io();
    expect(await runCli(['spans', '--help'], c.io)).toBe(0);
    expect(c.out.join('')).toContain('vocab:FILE.json');
  });
});

describe('rlvr-rollout synth', () => {
  it('writes the library stream for the same seed and knobs, and the same file twice', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rlvr-synth-'));
    const out = join(dir, 'tasks.jsonl');
    const args = [
      'synth',
      '--count',
      '5',
      '--seed',
      '7',
      '--from',
      '3',
      '--options',
      '{"operations": ["add", "mul"], "maxSteps": 4}',
      '--out',
      out,
    ];
    expect(await runCli(args, io().io)).toBe(0);
    const first = await readFile(out, 'utf8');
    const rows = first
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const want = syntheticGenerator({ operations: ['add', 'mul'], maxSteps: 4 })
      .tasks(7, 5, 3)
      .map((t) => ({ question: t.question, answer: t.answer, solution: t.solution }));
    expect(rows).toEqual(want);
    expect(await runCli(args, io().io)).toBe(0);
    expect(await readFile(out, 'utf8')).toBe(first);
    expect((await loadTasks(out, 'synthetic')).map((t) => t.answer)).toEqual(want.map((t) => t.answer));
    const s = io();
    expect(await runCli(['synth', '--count', '2'], s.io)).toBe(0);
    expect(s.out.join('').trim().split('\n')).toHaveLength(2);
  });

  it('--task long-chain writes rows with their chain, which the labeller reads back from the file', async () => {
    const out = join(await mkdtemp(join(tmpdir(), 'synth-long-')), 'long.jsonl');
    expect(await runCli(['synth', '--task', 'long-chain', '--count', '4', '--seed', '3', '--out', out], io().io)).toBe(0);
    const want = longChainGenerator().tasks(3, 4);
    const read = await loadTasks(out, 'synthetic');
    expect(read.map((t) => [t.question, t.answer, t.solution, t.chain])).toEqual(
      want.map((t) => [t.question, t.answer, t.solution, t.chain]),
    );
    for (const t of read) expect(labelCompletion(t.chain!, t.solution!).kind).toBe('correct');
    const bad = io();
    expect(await runCli(['synth', '--task', 'long', '--count', '1'], bad.io)).toBe(2);
    expect(bad.err.join('')).toMatch(/^rlvr-rollout synth: --task: unknown task "long": the tasks are arith, long-chain\n/);
  });

  it('names bad knobs and arguments', async () => {
    const a = io();
    expect(await runCli(['synth', '--count', '2', '--options', '{"digits": 9}'], a.io)).toBe(1);
    expect(a.err.join('')).toMatch(/invalid synthetic task configuration: digits/);
    const b = io();
    expect(await runCli(['synth', '--count', 'many'], b.io)).toBe(2);
    expect(b.err.join('')).toMatch(/^rlvr-rollout synth: --count: must be an integer from 1 to 10000000 \(got "many"\)\n/);
    const c = io();
    expect(await runCli(['synth', '--count', '2', '--options', '{'], c.io)).toBe(1);
    expect(c.err.join('')).toMatch(/^rlvr-rollout synth: --options: is not JSON/);
  });

  it('refuses a count over the documented cap before any work (1e12 grew memory without bound)', async () => {
    for (const count of ['1e12', String(MAX_SYNTH_COUNT + 1)]) {
      const r = io();
      expect(await runCli(['synth', '--count', count], r.io)).toBe(2);
      expect(r.err.join('')).toContain(`--count: must be an integer from 1 to ${MAX_SYNTH_COUNT}`);
      expect(r.out).toEqual([]);
    }
  });
});

describe('--out that cannot be written (issue 19 item 3)', () => {
  it('synth and spans name the file in one line, before any work, and leave nothing behind', async () => {
    const dir = await setup('{"completion": [0, 1, 2, 3, 5]}\n');
    const plainFile = join(dir, 'in.jsonl');
    const spans = ['spans', '--tokenizer', `vocab:${join(dir, 'vocab.json')}`, '--in', plainFile];
    for (const [out, why] of [
      [join(dir, 'missing', 'out.jsonl'), `directory ${join(dir, 'missing')} does not exist`],
      [join(plainFile, 'out.jsonl'), `${plainFile} is not a directory`],
      [dir, `${dir} is a directory`],
    ] as const) {
      for (const argv of [
        ['synth', '--count', '3', '--out', out],
        [...spans, '--out', out],
      ]) {
        const r = io();
        expect(await runCli(argv, r.io), argv.join(' ')).toBe(1);
        expect(r.err.join('')).toBe(`rlvr-rollout ${argv[0]}: ${out}: cannot write: ${why}\n`);
        expect(r.out).toEqual([]);
      }
    }
    expect((await readdir(dir)).sort()).toEqual(['in.jsonl', 'vocab.json']);
  });
});
