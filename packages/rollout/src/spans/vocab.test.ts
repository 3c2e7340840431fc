import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadVocab, vocabFromJson } from './vocab.js';
import { RolloutError } from '../errors.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('vocabFromJson', () => {
  it('reads hex, base64 and utf8 byte strings, arrays and id-keyed objects', () => {
    const a = vocabFromJson({ tokens: ['5c626f786564', 'cf'] });
    expect(hex(a.tokenBytes(0))).toBe('5c626f786564');
    expect(hex(a.tokenBytes(1))).toBe('cf'); // half of "π": a piece, not a character
    const b = vocabFromJson({ encoding: 'base64', tokens: { '7': Buffer.from('{x').toString('base64') } });
    expect(new TextDecoder().decode(b.tokenBytes(7))).toBe('{x');
    const c = vocabFromJson({ encoding: 'utf8', tokens: ['é', '<eos>'], special: [1] });
    expect(hex(c.tokenBytes(0))).toBe('c3a9');
    expect(c.tokenBytes(1).length).toBe(0);
    expect(c.size).toBe(2);
  });

  it('throws typed errors naming the token and the source', () => {
    expect(() => vocabFromJson({ tokens: ['zz'] }, 'v.json')).toThrow(/v\.json, field tokens\.0: token 0: "zz" is not hex bytes/);
    expect(() => vocabFromJson({ encoding: 'base64', tokens: ['a'] })).toThrow(/not base64/);
    expect(() => vocabFromJson({ tokens: { x: 'aa' } }, 'v.json')).toThrow(
      'v.json, field tokens.x: token key "x" is not a decimal token id',
    );
    expect(() => vocabFromJson({ tokens: 3 }, 'v.json')).toThrow(/v\.json: not a vocabulary file: tokens/);
    const v = vocabFromJson({ tokens: ['aa'] }, 'v.json');
    try {
      v.tokenBytes(5);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(RolloutError);
      expect((e as RolloutError).code).toBe('invalid_tokenizer');
      expect((e as Error).message).toBe('v.json: token id 5 is not in the vocabulary (1 ids)');
    }
  });
});

describe('loadVocab', () => {
  it('loads a file and reports unreadable or non-JSON files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rlvr-vocab-'));
    await writeFile(join(dir, 'v.json'), JSON.stringify({ tokens: ['7b'] }));
    await writeFile(join(dir, 'bad.json'), '{"tokens": [');
    expect(hex((await loadVocab(join(dir, 'v.json'))).tokenBytes(0))).toBe('7b');
    await expect(loadVocab(join(dir, 'bad.json'))).rejects.toThrow(/bad\.json: vocabulary is not JSON/);
    await expect(loadVocab(join(dir, 'missing.json'))).rejects.toMatchObject({ code: 'invalid_file' });
  });
});
