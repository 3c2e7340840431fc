import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs-core';
import { CoreError, FINISH_CODES } from '@rlvr/core';
import { ChatTemplate } from '@rlvr/policy';
import { policySampler, type PolicySampler } from './policy-sampler.js';
import { RolloutError } from '../errors.js';
import { sampleGroups } from './sample-groups.js';
import { chatmlTemplate } from '@rlvr/policy';
import type { SampleRequest, SamplingParams } from './sampler.js';
import { describeSamplerContract } from '../test-utils/sampler-contract.js';
import { tinyPolicy, type TinyPolicy } from '../test-utils/tiny-policy.js';

// decoding on a shared 2-core machine: generous per-test limits (no timing is asserted)

let tiny: TinyPolicy;
beforeAll(async () => {
  tiny = await tinyPolicy();
});
afterAll(() => tiny.dispose());

const params = (over: Partial<SamplingParams> = {}): SamplingParams => ({
  temperature: 1,
  topP: 1,
  topK: 0,
  maxNewTokens: 16,
  stop: [],
  seed: 7,
  ...over,
});
const enc = (text: string) => tiny.tokenizer.encode(text);
/** Prompts of different lengths (1, a few, many tokens), so batches are left-padded. */
const PROMPTS = () => [
  enc('Ann'),
  enc('Ben has 12 apples.'),
  enc('Tom has 80 stones. He buys 53 more, then gives away 59. How many stones does Tom have?'),
];

describeSamplerContract('policy sampler (KV cache)', async () => ({
  sampler: policySampler(tiny.model, tiny.tokenizer, { batchSize: 12 }),
  prompts: PROMPTS().map((tokens) => ({ tokens })),
  stop: 'e',
}));

/** Greedy decoding by recomputing `model.logits` over the growing sequence, one prompt at a time: the independent reference. */
function greedyReference(prompt: number[], steps: number): number[] {
  const seq = [...prompt];
  for (let t = 0; t < steps; t++) {
    const row = tf.tidy(() => {
      const logits = tiny.model.logits({ ids: tf.tensor2d([seq], undefined, 'int32') });
      return tf.argMax(tf.reshape(tf.slice(logits, [0, seq.length - 1, 0], [1, 1, tiny.model.dims.V]), [-1])).dataSync()[0]!;
    });
    seq.push(row);
  }
  return seq.slice(prompt.length);
}

/** log-softmax(logits / T) of each completion token, from `tokenLogprobs` on the whole final sequence. */
function scoredLogprobs(prompt: number[], completion: readonly number[], temperature: number): number[] {
  const seq = [...prompt, ...completion];
  return tf.tidy(() => {
    const h = tiny.model.hidden({ ids: tf.tensor2d([seq], undefined, 'int32') });
    const targets = tf.tensor2d([[...seq.slice(1), 0]], undefined, 'int32');
    const lp = tiny.model.tokenLogprobs(h, targets, { temperature }).logprobs.dataSync();
    return Array.from(lp.slice(prompt.length - 1, seq.length - 1));
  });
}

const requests = (prompts: number[][], n: number, over: Partial<SamplingParams> = {}): SampleRequest[] =>
  prompts.map((tokens, i) => ({ prompt: { tokens }, n, params: params({ seed: 11 + i, ...over }) }));

describe('policySampler', () => {
  it('greedy decoding with the KV cache gives the tokens of a full recomputation, and log-probs equal tokenLogprobs of the final sequences', async () => {
    const prompts = PROMPTS();
    for (const kvCache of [true, false]) {
      const s = policySampler(tiny.model, tiny.tokenizer, { kvCache, eosTokenIds: [], batchSize: 3 });
      const out = await s.sample(requests(prompts, 1, { temperature: 0, maxNewTokens: 12 }));
      out.forEach((r, i) => {
        const c = r.completions[0]!;
        expect(c.finish).toBe('length');
        expect(c.tokens, `prompt ${i}, kvCache ${kvCache}`).toEqual(greedyReference(prompts[i]!, 12));
        const ref = scoredLogprobs(prompts[i]!, c.tokens, 1);
        c.logprobs!.forEach((x, t) => expect(Math.abs(x - ref[t]!), `token ${t}`).toBeLessThan(1e-4));
      });
    }
  });

  it('sampled log-probs are log-softmax(logits / T) of the sampled tokens (T = 0.7, top-k, top-p)', async () => {
    const prompts = PROMPTS();
    const s = policySampler(tiny.model, tiny.tokenizer, { batchSize: 8 });
    const out = await s.sample(requests(prompts, 2, { temperature: 0.7, topK: 40, topP: 0.9, maxNewTokens: 10 }));
    out.forEach((r, i) =>
      r.completions.forEach((c) => {
        const ref = scoredLogprobs(prompts[i]!, c.tokens, 0.7);
        c.logprobs!.forEach((x, t) => expect(Math.abs(x - ref[t]!)).toBeLessThan(1e-4));
      }),
    );
  });

  it('the KV cache and the recompute path sample the same tokens for the same seed', async () => {
    const reqs = requests(PROMPTS(), 2, { temperature: 1, topK: 50, topP: 0.95, maxNewTokens: 10 });
    const a = await policySampler(tiny.model, tiny.tokenizer, { kvCache: true }).sample(reqs);
    const b = await policySampler(tiny.model, tiny.tokenizer, { kvCache: false }).sample(reqs);
    expect(b.map((r) => r.completions.map((c) => c.tokens))).toEqual(a.map((r) => r.completions.map((c) => c.tokens)));
  });

  it('rows that end early leave the KV cache without changing the other rows (against the recompute twin)', async () => {
    // 80 of the ~545 ids end a completion, so rows finish at staggered steps and the cache is compacted
    const eosTokenIds = Array.from({ length: 80 }, (_, i) => i * 3);
    const reqs = requests(PROMPTS(), 4, { temperature: 1, maxNewTokens: 24 });
    const before = tf.memory().numTensors;
    const a = await policySampler(tiny.model, tiny.tokenizer, { eosTokenIds, batchSize: 12 }).sample(reqs);
    expect(tf.memory().numTensors).toBe(before);
    const b = await policySampler(tiny.model, tiny.tokenizer, { eosTokenIds, batchSize: 12, kvCache: false }).sample(reqs);
    const lengths = a.flatMap((r) => r.completions.map((c) => c.tokens.length));
    expect(new Set(lengths).size).toBeGreaterThan(3); // staggered ends
    expect(lengths.filter((n) => n < 12).length).toBeGreaterThan(6); // more than half done by step 12: compacted
    expect(b.map((r) => r.completions.map((c) => c.tokens))).toEqual(a.map((r) => r.completions.map((c) => c.tokens)));
    a.forEach((r, i) =>
      r.completions.forEach((c, j) =>
        c.logprobs!.forEach((x, t) => expect(Math.abs(x - b[i]!.completions[j]!.logprobs![t]!)).toBeLessThan(1e-4)),
      ),
    );
  });

  it('a row does not depend on the padding or the other rows of its batch', async () => {
    const prompts = PROMPTS();
    const alone = await policySampler(tiny.model, tiny.tokenizer).sample(
      requests([prompts[0]!], 2, { temperature: 0.8, maxNewTokens: 15 }),
    );
    // the same request after a long prompt: prompt 0 is now left-padded by many columns
    const both = await policySampler(tiny.model, tiny.tokenizer).sample([
      { ...requests([prompts[2]!], 1)[0]!, params: params({ seed: 5 }) },
      requests([prompts[0]!], 2, { temperature: 0.8, maxNewTokens: 15 })[0]!,
    ]);
    expect(both[1]!.completions.map((c) => c.tokens)).toEqual(alone[0]!.completions.map((c) => c.tokens));
  });

  it('top-k 1 and a tiny top-p are greedy; completions of a group differ when sampling', async () => {
    const prompts = PROMPTS();
    const s = policySampler(tiny.model, tiny.tokenizer, { eosTokenIds: [] });
    const greedy = await s.sample(requests(prompts, 1, { temperature: 0 }));
    const k1 = await s.sample(requests(prompts, 2, { temperature: 1.5, topK: 1 }));
    const p0 = await s.sample(requests(prompts, 2, { temperature: 1.5, topP: 1e-9 }));
    for (const out of [k1, p0])
      out.forEach((r, i) => r.completions.forEach((c) => expect(c.tokens).toEqual(greedy[i]!.completions[0]!.tokens)));
    const sampled = await s.sample(requests(prompts, 4, { temperature: 1 }));
    for (const r of sampled) expect(new Set(r.completions.map((c) => c.tokens.join(','))).size).toBeGreaterThan(1);
  });

  it('ends at an EOS id with finish "stop", keeping the EOS token and leaving it out of the text', async () => {
    const prompt = PROMPTS()[1]!;
    const free = await policySampler(tiny.model, tiny.tokenizer, { eosTokenIds: [] }).sample(
      requests([prompt], 1, { temperature: 0, maxNewTokens: 8 }),
    );
    const t = free[0]!.completions[0]!.tokens;
    // declare the greedy token at step 3 to be EOS: decoding must stop right there
    const s = policySampler(tiny.model, tiny.tokenizer, { eosTokenIds: [t[3]!] });
    const c = (await s.sample(requests([prompt], 1, { temperature: 0, maxNewTokens: 8 })))[0]!.completions[0]!;
    const firstAt = t.indexOf(t[3]!);
    expect(c.finish).toBe('stop');
    expect(c.tokens).toEqual(t.slice(0, firstAt + 1));
    // the real EOS (a special token) has no bytes, so it never appears in the text
    const im = tiny.tokenizer.specialId('<|im_end|>')!;
    expect(policySampler(tiny.model, tiny.tokenizer).eosTokenIds).toContain(im);
    expect(policySampler(tiny.model, tiny.tokenizer).tokenBytes.tokenBytes(im)).toHaveLength(0);
  });

  it('ends at a stop string found in the decoded bytes, even across a token boundary; the text is cut before it', async () => {
    const prompt = PROMPTS()[2]!;
    const s = policySampler(tiny.model, tiny.tokenizer, { eosTokenIds: [] });
    const full = (await s.sample(requests([prompt], 1, { temperature: 0, maxNewTokens: 24 })))[0]!.completions[0]!;
    const pieces = full.tokens.map((id) => Buffer.from(tiny.tokenizer.tokenBytes(id)).toString('latin1'));
    // a stop string made of the last byte of token 4 and the first byte of token 5
    const k = pieces.findIndex(
      (p, i) =>
        i >= 4 && p.length > 0 && pieces[i + 1]!.length > 0 && /^[\x20-\x7e]$/.test(p.at(-1)!) && /^[\x20-\x7e]/.test(pieces[i + 1]!),
    );
    expect(k).toBeGreaterThanOrEqual(0);
    const stop = pieces[k]!.at(-1)! + pieces[k + 1]![0]!;
    const text = pieces.join('');
    const at = text.indexOf(stop);
    let end = 0; // tokens up to the one that completes the first occurrence
    for (let len = 0; len < at + stop.length; end++) len += pieces[end]!.length;
    const c = (await s.sample(requests([prompt], 1, { temperature: 0, maxNewTokens: 24, stop: ['no such text', stop] })))[0]!
      .completions[0]!;
    expect(c.finish).toBe('stop');
    expect(c.tokens).toEqual(full.tokens.slice(0, end));
    expect(c.logprobs).toEqual(full.logprobs!.slice(0, end));
    expect(c.text).toBe(new TextDecoder().decode(Buffer.from(text.slice(0, at), 'latin1')));
  });

  it('stops each row at its own maxNewTokens with finish "length"', async () => {
    const s = policySampler(tiny.model, tiny.tokenizer, { eosTokenIds: [] });
    const [a, b] = await s.sample([
      { prompt: { tokens: PROMPTS()[0]! }, n: 2, params: params({ maxNewTokens: 3 }) },
      { prompt: { tokens: PROMPTS()[1]! }, n: 1, params: params({ maxNewTokens: 9 }) },
    ]);
    for (const c of a!.completions) expect([c.finish, c.tokens.length]).toEqual(['length', 3]);
    expect([b!.completions[0]!.finish, b!.completions[0]!.tokens.length]).toEqual(['length', 9]);
  });

  it('encodes text prompts, renders messages with a chat template, and fails bad prompts as "error" rollouts', async () => {
    const chat = new ChatTemplate(
      '{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}',
    );
    const s = policySampler(
      tiny.model,
      tiny.tokenizer,
      {},
      { applyChatTemplate: (m, o) => chat.render([...m], { addGenerationPrompt: o.addGenerationPrompt }) },
    );
    const messages = [{ role: 'user' as const, content: 'Ann has 12 apples.' }];
    const out = await s.sample([
      { prompt: { text: 'Ben has 12 apples.' }, n: 1, params: params() },
      { prompt: { messages }, n: 1, params: params() },
      { prompt: { tokens: [] }, n: 2, params: params() },
      { prompt: { tokens: [1, 99999] }, n: 1, params: params() },
      { prompt: { tokens: [1, 2] }, n: 1, params: params({ maxNewTokens: 255 }) },
    ]);
    expect(out[0]!.promptTokens).toEqual(enc('Ben has 12 apples.'));
    expect(out[1]!.promptTokens).toEqual(enc(chatmlTemplate(messages, { addGenerationPrompt: true, enableThinking: true })));
    expect(out[1]!.promptTokens).toContain(tiny.tokenizer.specialId('<|im_start|>'));
    expect(out[0]!.completions[0]!.finish).not.toBe('error');
    expect(out[2]!.completions.map((c) => [c.finish, c.error])).toEqual([
      ['error', 'the prompt is empty: the first token needs context'],
      ['error', 'the prompt is empty: the first token needs context'],
    ]);
    expect(out[3]!.completions[0]!.error).toMatch(/prompt token 1 = 99999 is not an id in \[0, \d+\)/);
    expect(out[4]!.completions[0]!.error).toMatch(/prompt \(2 tokens\) \+ maxNewTokens \(255\) exceeds the model's context of 256/);
    const noTemplate = await policySampler(tiny.model, tiny.tokenizer).sample([{ prompt: { messages }, n: 1, params: params() }]);
    expect(noTemplate[0]!.completions[0]!.error).toMatch(/needs a chat template/);
  });

  it('leaks no tensors, on both paths, also when aborted', async () => {
    const reqs = requests(PROMPTS(), 2, { maxNewTokens: 12 });
    for (const kvCache of [true, false]) {
      const s = policySampler(tiny.model, tiny.tokenizer, { kvCache, batchSize: 4 });
      const before = tf.memory().numTensors;
      await s.sample(reqs);
      expect(tf.memory().numTensors).toBe(before);
      const ac = new AbortController();
      const run = s.sample(reqs, ac.signal);
      ac.abort(new Error('stop now'));
      await expect(run).rejects.toThrow('stop now');
      expect(tf.memory().numTensors).toBe(before);
    }
  });

  it('memory is bounded by the batch, not by the number of rows', async () => {
    const peak = async (rows: number, batchSize: number) => {
      const s = policySampler(tiny.model, tiny.tokenizer, { batchSize, eosTokenIds: [] });
      const info = await tf.profile(async () => {
        await s.sample([{ prompt: { tokens: PROMPTS()[2]! }, n: rows, params: params({ maxNewTokens: 20 }) }]);
        return [];
      });
      return info.peakBytes - info.newBytes - tf.memory().numBytes; // above what was allocated before
    };
    await peak(4, 4); // warm-up (first-call allocations)
    const four = await peak(4, 4);
    const sixteenInFours = await peak(16, 4);
    const sixteen = await peak(16, 16);
    expect(sixteenInFours).toBe(four); // 4 batches of 4 rows never hold more than one batch
    expect(sixteen).toBeGreaterThan(four * 3); // the cache and activations scale with the batch
  });

  it('rejects bad options naming the field', () => {
    expect(() => policySampler(tiny.model, tiny.tokenizer, { batchSize: 0 })).toThrow(CoreError);
    expect(() => policySampler(tiny.model, tiny.tokenizer, { batchSize: 0 })).toThrow(/batchSize/);
    expect(() => policySampler(tiny.model, tiny.tokenizer, { beams: 2 } as never)).toThrow(/beams/);
    expect(() => policySampler(tiny.model, tiny.tokenizer, { eosTokenIds: [1, 100000] })).toThrow(
      /eosTokenIds has id 100000, outside the model's vocabulary/,
    );
    expect(() => policySampler(tiny.model, tiny.tokenizer, { padTokenId: 100000 })).toThrow(CoreError);
    const s = policySampler(tiny.model, tiny.tokenizer);
    expect(() => s.promptIds({ prompt: {}, n: 1, params: params() })).toThrow(RolloutError);
    expect(s.promptIds({ prompt: { text: 'Ann' }, n: 1, params: params() })).toEqual(enc('Ann'));
  });

  it('feeds sampleGroups: a valid batch with behaviour log-probs, finish codes and texts', async () => {
    const s: PolicySampler = policySampler(tiny.model, tiny.tokenizer);
    const { batch, texts, errors } = await sampleGroups(
      PROMPTS().map((tokens) => ({ tokens })),
      s,
      { groupSize: 3, maxNewTokens: 12, temperature: 1, topK: 20, seed: 3 },
    );
    expect(batch.numRollouts).toBe(9);
    expect(batch.behaviorLogprobs).toBeDefined();
    expect(errors.every((e) => e === null)).toBe(true);
    expect([...batch.finish].every((f) => f === FINISH_CODES.stop || f === FINISH_CODES.length)).toBe(true);
    expect(texts).toHaveLength(9);
    const again = await sampleGroups(
      PROMPTS().map((tokens) => ({ tokens })),
      s,
      { groupSize: 3, maxNewTokens: 12, temperature: 1, topK: 20, seed: 3 },
    );
    expect(again.batch.completionTokens).toEqual(batch.completionTokens);
  });
});
