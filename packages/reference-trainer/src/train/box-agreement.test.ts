/**
 * The box the grader grades and the box whose spans GRAIL weights are the same one, on completions of
 * reasoning models: think blocks (closed, never closed, ended by `<answer>`), draft boxes inside them,
 * answers cut off inside their box, adjacent boxes, multi-byte text. Through the path of a training
 * step: `sampleGroups` with the embedded tokenizer's token bytes locates the spans and decodes the text,
 * `mathReward` grades that text; the grader's `extract` is the locator's `which`, and with `last` (the
 * reward's box) they must agree on every completion. The sampler is scripted (the warm-up policy does
 * not write think blocks); the tokenizer, the span locator and the grader are the real ones.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Rng, getSpans } from '@rlvr/core';
import { mathReward } from '@rlvr/math-verify';
import { loadTokenizer } from '@rlvr/policy';
import type { Tokenizer } from '@rlvr/policy';
import { policyTokenBytes, sampleGroups, spanLocator } from '@rlvr/rollout';
import type { Sampler } from '@rlvr/rollout';
import { EMBEDDED_CHECKPOINT } from './config.js';

const HAND = [
  '<think>2 + 3 = \\boxed{4}? No, recount.</think>\n\nThe sum is \\boxed{5}.',
  '<think>so far \\boxed{5}, now the second case',
  '<think>\\boxed{4} hmm<answer>\\boxed{5}</answer>',
  '<think>\\boxed{5}</think> The answer is five.',
  'so \\boxed{5}</think>\n\\boxed{6}',
  '\\boxed{4}, no wait: \\boxed{\\frac{1}{2',
  '<thinking>π ≈ \\boxed{3}</thinking> 答案是 \\boxed{5}。',
  '\\boxed{1}, \\boxed{2} and \\boxed{5}',
  'No box at all.',
];

const FRAGMENTS = [
  '<think>',
  '</think>',
  '<thinking>',
  '</thinking>',
  '<answer>',
  '</answer>',
  '\\boxed{5}',
  '\\boxed{6}',
  '\\boxed{\\frac{1}{2}}',
  '\\fbox{5}',
  '\\boxed 5',
  '\\boxed{',
  '}',
  ', ',
  ' and ',
  ' so ',
  'π ≈ 3.14',
  '答案',
  '😀',
  '\n\n',
  ' Then we check every single step once more. ',
];

/** Completions composed of the fragments above, from a seeded generator. */
function generated(n: number): string[] {
  const rng = new Rng(20261207);
  return Array.from({ length: n }, () => Array.from({ length: 1 + rng.int(10) }, () => FRAGMENTS[rng.int(FRAGMENTS.length)]!).join(''));
}

let tokenizer: Tokenizer;
let eos: number;
beforeAll(() => {
  tokenizer = loadTokenizer(EMBEDDED_CHECKPOINT);
  eos = tokenizer.specialId('<|im_end|>') ?? tokenizer.specialId('<|endoftext|>')!;
});
afterAll(() => tokenizer.free());

/** One prompt whose G completions are `texts` (each followed by EOS). */
function scripted(texts: readonly string[]): Sampler {
  return {
    name: 'scripted',
    tokenBytes: policyTokenBytes(tokenizer),
    sample: async (requests) =>
      requests.map((r) => ({
        promptTokens: [...r.prompt.tokens!],
        completions: texts.slice(0, r.n).map((t) => ({ tokens: [...tokenizer.encode(t), eos], finish: 'stop' as const })),
      })),
  };
}

describe('the graded box and the weighted box are the same one', () => {
  const texts = [...HAND, ...generated(600)];

  test.each(['last', 'first'] as const)(
    'which %s: the span locator of a training step covers exactly the box mathReward reads with the same extract',
    async (which) => {
      const out = await sampleGroups([{ tokens: tokenizer.encode('User: What is 2 + 3?\nAssistant:') }], scripted(texts), {
        groupSize: texts.length,
        maxNewTokens: 512,
        spans: { which },
      });
      const enc = new TextEncoder();
      const reasons = new Map<string, number>();
      let located = 0;
      for (let i = 0; i < texts.length; i++) {
        const text = out.texts[i]!;
        expect(text).toBe(texts[i]);
        const graded = mathReward(text, '5', { extract: which });
        reasons.set(graded.reason, (reasons.get(graded.reason) ?? 0) + 1);
        const spans = getSpans(out.batch, i);
        const where = `rollout ${i}: ${JSON.stringify(text)} (${graded.reason})`;
        expect(spans === null, where).toBe(graded.answer === null);
        if (spans === null || graded.answer === null) continue;
        located++;
        // the tokens holding the grader's first marker byte, last marker byte and last byte are the span's edges
        const ids = out.batch.completionTokens.subarray(out.batch.completionOffsets[i]!, out.batch.completionOffsets[i + 1]!);
        const offsets = tokenizer.offsets(ids);
        const byte = (utf16: number) => enc.encode(text.slice(0, utf16)).length;
        const holding = (b: number) => {
          let t = 0;
          while (offsets[t + 1]! <= b) t++;
          return t;
        };
        const a = graded.answer;
        expect([spans.open[0], spans.open[1] - 1, spans.close[1] - 1], where).toEqual([
          holding(byte(a.start)),
          holding(byte(a.contentStart) - 1),
          holding(byte(a.end) - 1),
        ]);
      }
      // the set reaches every case the think handling and the cut box decide (counts of the grader's reasons)
      expect(located).toBeGreaterThan(150);
      expect(reasons.get('unclosed_reasoning')).toBeGreaterThan(100);
      expect(reasons.get('no_answer')).toBeGreaterThan(100);
      if (which === 'last') expect(reasons.get('unclosed_box')).toBeGreaterThan(10);
      // the locator without think tags (as before them) would disagree on many of them: 207 (last) and 255 (first) of 609
      const before = spanLocator({ which, thinkTags: [] });
      let differ = 0;
      for (let i = 0; i < texts.length; i++) {
        const ids = out.batch.completionTokens.subarray(out.batch.completionOffsets[i]!, out.batch.completionOffsets[i + 1]!);
        const old = before.fromTokens(ids, policyTokenBytes(tokenizer));
        if (JSON.stringify(old) !== JSON.stringify(getSpans(out.batch, i))) differ++;
      }
      expect(differ).toBeGreaterThan(100);
    },
    60_000,
  );
});
