/** Cutting the completion out of an OpenRLHF query, and request validation, without a server. */
import { describe, expect, it } from 'vitest';
import { completionOf, parseGetRewardRequest } from './get-reward.js';

describe('completionOf', () => {
  it.each([
    ['prefix', 'Q: 1+1?\nA: 2', 'Q: 1+1?\n', 'A: 2', 'prefix'],
    ['empty prompt (verl sends the response alone)', 'A: \\boxed{2}', '', 'A: \\boxed{2}', 'prefix'],
    ['left padding and BOS before the prompt', '<pad><pad><s>Q?\nA', 'Q?\n', 'A', 'inside'],
    ['the prompt repeated in the completion: the first occurrence is the prompt', '<s>Q?\nQ?\nA', 'Q?\n', 'Q?\nA', 'inside'],
    ['prompt changed by a tokenizer round trip', 'Q:  1+1? A', 'Q: 1+1?', 'Q:  1+1? A', 'missing'],
  ])('%s', (_name, query, prompt, completion, match) => {
    expect(completionOf(query, prompt)).toEqual({ completion, match });
  });
});

describe('parseGetRewardRequest', () => {
  it('keeps numeric labels, ignores extra keys', () => {
    expect(parseGetRewardRequest({ query: ['a'], prompts: [''], labels: [3], extra: 1 })).toEqual({
      query: ['a'],
      prompts: [''],
      labels: [3],
    });
  });
  it.each([
    [null, /takes a JSON object/],
    [{ query: 'a', labels: ['1'] }, /query: .*array/],
    [{ query: ['a'], labels: [null] }, /labels\.0/],
    [{ query: ['a'], labels: [Infinity] }, /labels\.0/],
    [{ query: ['a', 'b'], labels: ['1', '2'], prompts: ['p'] }, /query has 2 entries but prompts has 1/],
  ])('%j is refused', (input, message) => {
    expect(() => parseGetRewardRequest(input)).toThrow(message);
  });
});
