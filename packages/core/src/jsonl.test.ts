import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { appendJsonl, parseJsonl, readJsonl, repairJsonl } from './jsonl.js';

const scratch = (): Promise<string> => mkdtemp(join(tmpdir(), 'rlvr-core-jsonl-'));
const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('readJsonl', () => {
  it('drops a BOM, skips blank lines but counts them, reads CRLF', async () => {
    const dir = await scratch();
    const f = join(dir, 'a.jsonl');
    await writeFile(f, '\ufeff{"a":1}\r\n\r\n{"a":2}\n');
    expect(await collect(readJsonl(f))).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 3, value: { a: 2 } },
    ]);
    expect(parseJsonl('\ufeff{"a":1}\n\n[2]')).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 3, value: [2] },
    ]);
  });

  it('names file and line for a bad line, and the stream name for stdin', async () => {
    const dir = await scratch();
    const f = join(dir, 'b.jsonl');
    await writeFile(f, '{"a":1}\n{oops\n');
    await expect(collect(readJsonl(f))).rejects.toThrow(new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: not JSON`));
    await expect(collect(readJsonl(Readable.from(['[1]\n', 'x\n']), { name: '<stdin>' }))).rejects.toThrow(/^<stdin>:2: not JSON/);
    await expect(collect(readJsonl(join(dir, 'missing.jsonl')))).rejects.toThrow(/missing.jsonl: cannot read: no such file$/);
    await expect(collect(readJsonl(Readable.from(['[1]\n', '"' + 'x'.repeat(100) + '"\n']), { maxLineChars: 50 }))).rejects.toThrow(
      /<stdin>:2: line is 102 characters, over the limit of 50/,
    );
  });
});

describe('readJsonl with invalidLines: yield', () => {
  it('hands a bad line over with its error and reads on', async () => {
    const got = await collect(readJsonl(Readable.from(['{"a":1}\nnot json\n\n[2]\n']), { name: 'rows', invalidLines: 'yield' }));
    expect(got.map((l) => [l.line, l.value, l.error?.message])).toEqual([
      [1, { a: 1 }, undefined],
      [2, undefined, expect.stringMatching(/^rows:2: not JSON: /)],
      [4, [2], undefined],
    ]);
    expect(got[1]!.error).toMatchObject({ code: 'read_failed', location: { file: 'rows', line: 2 } });
  });
});

describe('repairJsonl', () => {
  it('cuts a torn last line and leaves a sound log alone', async () => {
    const dir = await scratch();
    const f = join(dir, 'm.jsonl');
    await writeFile(f, '{"step":1}\n{"step":2}\n{"step":3,"lo');
    expect(await repairJsonl(f)).toEqual({ keptLines: 2, droppedLines: 1, droppedBytes: 13 });
    expect(await readFile(f, 'utf8')).toBe('{"step":1}\n{"step":2}\n');
    expect(await repairJsonl(f)).toEqual({ keptLines: 2, droppedLines: 0, droppedBytes: 0 });
    // a complete JSON value without its newline is torn too: the next append would join it
    await writeFile(f, '{"step":1}\n{"step":2}');
    expect((await repairJsonl(f)).droppedLines).toBe(1);
    expect(await repairJsonl(join(dir, 'none.jsonl'))).toEqual({ keptLines: 0, droppedLines: 0, droppedBytes: 0 });
  });

  it('cuts records past a checkpoint, and refuses corruption before the end', async () => {
    const dir = await scratch();
    const f = join(dir, 'm.jsonl');
    await writeFile(f, '{"step":1}\n{"step":2}\n{"step":3}\n');
    expect(await repairJsonl(f, (v) => (v as { step: number }).step <= 1)).toMatchObject({ keptLines: 1, droppedLines: 2 });
    expect(await readFile(f, 'utf8')).toBe('{"step":1}\n');
    await writeFile(f, '{"step":1}\n{bad\n{"step":3}\n');
    await expect(repairJsonl(f)).rejects.toThrow(/m.jsonl:2: not JSON \(the log is corrupt before its last line\)/);
  });
});

describe('appendJsonl', () => {
  it('appends one line per record; nothing for none', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rlvr-append-'));
    const file = join(dir, 'metrics.jsonl');
    await appendJsonl(file, [{ step: 1 }]);
    await appendJsonl(file, []);
    await appendJsonl(file, [{ step: 2 }, { step: 3, x: null }]);
    expect(await readFile(file, 'utf8')).toBe('{"step":1}\n{"step":2}\n{"step":3,"x":null}\n');
  });

  it.runIf(existsSync('/dev/full'))('a full disk names the log it could not append to', async () => {
    await expect(appendJsonl('/dev/full', [{ step: 1 }])).rejects.toThrow('/dev/full: cannot write: no space left on device');
  });

  it('a log path that is a directory is named too', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'rlvr-append-')), 'metrics.jsonl');
    await mkdir(dir);
    await expect(appendJsonl(dir, [{ step: 1 }])).rejects.toThrow(`${dir}: cannot write: ${dir} is a directory`);
  });
});
