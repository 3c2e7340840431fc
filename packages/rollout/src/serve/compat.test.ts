/**
 * rlvr-serve as a drop-in for vLLM's OpenAI server (issue 18), through the `openai` npm client
 * and raw HTTP: the field shapes of vLLM's documented responses, every parameter against an
 * independent reference computed in process from the same checkpoint, the SSE stream and its
 * final usage chunk, the extra routes.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, greedyReference, logSoftmax, nextLogits, serveTiny, sseEvents, type Served } from '../test-utils/served.js';

let s: Served;
let client: OpenAI;
beforeAll(async () => {
  s = await serveTiny(['--workers', '1']);
  client = new OpenAI({ baseURL: s.server.url, apiKey: 'unused', maxRetries: 0 });
});
afterAll(() => s?.close());

const PROMPT = 'Tom has 80 stones. He buys 53 more.';
const ids = () => s.tokenizer.encode(PROMPT);
const eosId = () => s.tokenizer.specialId('<|im_end|>')!;
/** completion text as the server writes it: special tokens (EOS) left out */
const decode = (t: readonly number[]) => {
  const special = new Set(s.tokenizer.specialTokens.values());
  return s.tokenizer.decode(t.filter((id) => !special.has(id)));
};
/** the raw completion of a body (token ids come back as "token_id:N") */
const tokensOf = (choice: { logprobs: { tokens: string[] } }) => choice.logprobs.tokens.map((t) => Number(t.slice('token_id:'.length)));
const greedy = { model: 'tiny', temperature: 0, logprobs: 0, return_tokens_as_token_ids: true } as const;

describe('models and the extra routes', () => {
  it('lists and retrieves the model as OpenAI and vLLM do; another id is a 404', async () => {
    const list = await client.models.list();
    expect(list.data).toHaveLength(1);
    const card = list.data[0]!;
    expect(card).toMatchObject({ id: 'tiny', object: 'model', owned_by: 'rlvr', max_model_len: 256 });
    expect(Number.isInteger(card.created)).toBe(true);
    expect(await client.models.retrieve('tiny')).toEqual(card);
    await expect(client.models.retrieve('other')).rejects.toMatchObject({
      status: 404,
      message: expect.stringContaining('The model `other` does not exist'),
    });
  });

  it('/tokenize, /detokenize and /version', async () => {
    const t = await call(s, '/tokenize', { model: 'tiny', prompt: PROMPT, return_token_strs: true });
    expect(t.status).toBe(200);
    expect(t.json).toEqual({
      count: ids().length,
      max_model_len: 256,
      tokens: ids(),
      token_strs: ids().map((id) => s.tokenizer.decode([id])),
    });
    const chat = await call(s, '/tokenize', { messages: [{ role: 'user', content: 'Hi' }] });
    expect(chat.json.tokens).toEqual(s.tokenizer.encode('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n'));
    expect((await call(s, '/detokenize', { model: 'tiny', tokens: ids() })).json).toEqual({ prompt: PROMPT });
    expect((await call(s, '/detokenize', { tokens: [999999] })).status).toBe(400);
    expect((await call(s, '/tokenize', { model: 'other', prompt: 'x' })).status).toBe(404);
    const v = await call(s, '/version');
    expect(v.json).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });
});

describe('/v1/completions', () => {
  it("greedy: vLLM's response shape, the text and tokens of an independent greedy decode", async () => {
    const r = await client.completions.create({ model: 'tiny', prompt: PROMPT, max_tokens: 8, temperature: 0 });
    expect(r).toMatchObject({ id: expect.stringMatching(/^cmpl-/), object: 'text_completion', model: 'tiny' });
    expect(Number.isInteger(r.created)).toBe(true);
    const ref = greedyReference(s.model, ids(), 8, undefined, new Set([eosId()]));
    expect(r.choices).toEqual([
      { index: 0, text: decode(ref), logprobs: null, finish_reason: ref.at(-1) === eosId() ? 'stop' : 'length', stop_reason: null },
    ]);
    expect(r.usage).toEqual({ prompt_tokens: ids().length, completion_tokens: ref.length, total_tokens: ids().length + ref.length });
  });

  it('logprobs k: the sampled token and the k most likely alternatives, equal to log-softmax of a full forward pass; text offsets in characters', async () => {
    // token strings as ids: two byte pieces of one character would both decode to U+FFFD and share a key
    const r = await call(s, '/v1/completions', { ...greedy, prompt: PROMPT, max_tokens: 5, logprobs: 3 });
    const lp = r.json.choices[0].logprobs;
    const out = greedyReference(s.model, ids(), 5, undefined, new Set([eosId()]));
    expect(tokensOf(r.json.choices[0])).toEqual(out);
    out.forEach((id, t) => {
      const ref = logSoftmax(nextLogits(s.model, [...ids(), ...out.slice(0, t)]));
      expect(lp.token_logprobs[t]).toBeCloseTo(ref[id]!, 4);
      const top = lp.top_logprobs[t] as Record<string, number>;
      const best = [...ref.keys()].sort((a, b) => ref[b]! - ref[a]!).slice(0, 3);
      // the 3 alternatives and the sampled token (one of them when greedy)
      expect(Object.keys(top).sort()).toEqual(best.map((b) => `token_id:${b}`).sort());
      for (const b of best) expect(top[`token_id:${b}`]).toBeCloseTo(ref[b]!, 4);
    });
    // without return_tokens_as_token_ids the tokens are their text; offsets count characters of the text
    const text = await client.completions.create({ model: 'tiny', prompt: PROMPT, max_tokens: 5, temperature: 0, logprobs: 0 });
    const tl = text.choices[0]!.logprobs!;
    const special = new Set(s.tokenizer.specialTokens.values());
    expect(tl.tokens).toEqual(out.map((id) => s.tokenizer.decode([id])));
    const dec = new TextDecoder();
    const lens = out.map(
      (id) => [...dec.decode(special.has(id) ? new Uint8Array(0) : s.tokenizer.tokenBytes(id), { stream: true })].length,
    );
    expect(tl.text_offset).toEqual(lens.map((_, i) => lens.slice(0, i).reduce((a, b) => a + b, 0)));
    expect(tl.top_logprobs!.map((d) => Object.keys(d))).toEqual(tl.tokens!.map((t) => [t]));
  });

  it('echo with max_tokens 0 scores the prompt: text = prompt, the first log-prob null, the others those of a full forward pass', async () => {
    const p = ids();
    const r = await call(s, '/v1/completions', { ...greedy, prompt: p, echo: true, max_tokens: 0, logprobs: 1 });
    expect(r.status).toBe(200);
    const c = r.json.choices[0];
    expect(c.text).toBe(PROMPT);
    expect(c.finish_reason).toBe('length');
    expect(tokensOf(c)).toEqual(p);
    expect(c.logprobs.token_logprobs[0]).toBeNull();
    expect(c.logprobs.top_logprobs[0]).toBeNull();
    for (let t = 1; t < p.length; t++)
      expect(c.logprobs.token_logprobs[t]).toBeCloseTo(logSoftmax(nextLogits(s.model, p.slice(0, t)))[p[t]!]!, 4);
    expect(r.json.usage).toEqual({ prompt_tokens: p.length, completion_tokens: 0, total_tokens: p.length });
    // echo before a completion: the prompt's tokens, then the completion's, in one list
    const g = await call(s, '/v1/completions', { ...greedy, prompt: p, echo: true, max_tokens: 4 });
    const alone = await call(s, '/v1/completions', { ...greedy, prompt: p, max_tokens: 4 });
    expect(g.json.choices[0].text).toBe(PROMPT + alone.json.choices[0].text);
    expect(tokensOf(g.json.choices[0])).toEqual([...p, ...tokensOf(alone.json.choices[0])]);
    expect(g.json.choices[0].logprobs.token_logprobs.slice(p.length)).toEqual(alone.json.choices[0].logprobs.token_logprobs);
    // without echo, max_tokens 0 is refused
    expect((await call(s, '/v1/completions', { model: 'tiny', prompt: 'x', max_tokens: 0 })).json.error.param).toBe('max_tokens');
  });

  it('stream: the same text, tokens and log-probs as one response, finish reason last, then the usage chunk and [DONE]', async () => {
    const body = {
      model: 'tiny',
      prompt: [PROMPT, 'Ann has 12 apples.'],
      n: 2,
      max_tokens: 10,
      temperature: 0.8,
      seed: 3,
      logprobs: 1,
      stop: ['e '],
    };
    const whole = await client.completions.create(body);
    const chunks: OpenAI.Completions.Completion[] = [];
    for await (const c of await client.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }))
      chunks.push(c);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(whole.usage);
    for (const choice of whole.choices) {
      const mine = chunks.flatMap((c) => c.choices.filter((x) => x.index === choice.index));
      expect(mine.map((x) => x.text).join('')).toBe(choice.text);
      expect(mine.flatMap((x) => x.logprobs!.tokens!)).toEqual(choice.logprobs!.tokens);
      expect(mine.flatMap((x) => x.logprobs!.token_logprobs!)).toEqual(choice.logprobs!.token_logprobs);
      expect(mine.slice(0, -1).every((x) => x.finish_reason === null)).toBe(true);
      expect(mine.at(-1)!.finish_reason).toBe(choice.finish_reason);
      for (const c of chunks.slice(0, -1)) expect(c).toMatchObject({ id: chunks[0]!.id, object: 'text_completion', model: 'tiny' });
    }
    // the wire: text/event-stream, data: events, [DONE] last; continuous usage stats on every chunk,
    // as vLLM counts them: the chunk's prompt and its choice's tokens so far
    const raw = await call(s, '/v1/completions', {
      ...body,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { events, done } = sseEvents(raw.text);
    expect(done).toBe(true);
    const sofar = new Map<number, number>();
    const promptOf = new Map<number, number>();
    for (const e of events.slice(0, -1)) {
      const [c] = e.choices;
      sofar.set(c.index, (sofar.get(c.index) ?? 0) + c.logprobs.tokens.length);
      expect(e.usage.completion_tokens).toBe(sofar.get(c.index));
      promptOf.set(Math.floor(c.index / 2), e.usage.prompt_tokens);
    }
    expect([...sofar.keys()].sort()).toEqual([0, 1, 2, 3]);
    expect(promptOf.get(0)! + promptOf.get(1)!).toBe(whole.usage!.prompt_tokens);
    expect(promptOf.get(0)).not.toBe(promptOf.get(1));
    expect(events.at(-1).usage).toEqual(whole.usage);
  });

  it('stop strings: stop_reason is the string, the text is cut before it (after it with include_stop_str_in_output), streamed too', async () => {
    const free = await call(s, '/v1/completions', { ...greedy, prompt: PROMPT, max_tokens: 12 });
    const text: string = free.json.choices[0].text;
    const stop = text.slice(3, 5);
    expect(stop.length).toBe(2);
    const r = await call(s, '/v1/completions', { ...greedy, prompt: PROMPT, max_tokens: 12, stop: [stop, 'zzz'] });
    expect(r.json.choices[0]).toMatchObject({ text: text.slice(0, text.indexOf(stop)), finish_reason: 'stop', stop_reason: stop });
    const inc = await call(s, '/v1/completions', { ...greedy, prompt: PROMPT, max_tokens: 12, stop, include_stop_str_in_output: true });
    expect(inc.json.choices[0].text).toBe(text.slice(0, text.indexOf(stop) + stop.length));
    const streamed = sseEvents(
      (await call(s, '/v1/completions', { ...greedy, prompt: PROMPT, max_tokens: 12, stop, stream: true })).text,
    ).events;
    expect(streamed.map((e) => e.choices[0].text).join('')).toBe(r.json.choices[0].text);
    expect(streamed.at(-1).choices[0]).toMatchObject({ finish_reason: 'stop', stop_reason: stop });
  });

  it('penalties, logit bias and allowed ids: the tokens of a greedy reference with the logit changes written from their definitions', async () => {
    const p = ids();
    const cases: [Record<string, unknown>, (x: Float32Array, out: readonly number[]) => void][] = [
      [
        { presence_penalty: 1.5, frequency_penalty: 0.7 },
        (x, out) => {
          const count = new Map<number, number>();
          for (const id of out) count.set(id, (count.get(id) ?? 0) + 1);
          for (const [id, c] of count) x[id] = x[id]! - 0.7 * c - 1.5;
        },
      ],
      [
        { repetition_penalty: 1.3 },
        (x, out) => {
          for (const id of new Set([...p, ...out])) x[id] = x[id]! > 0 ? x[id]! / 1.3 : x[id]! * 1.3;
        },
      ],
      [
        { logit_bias: { '5': 3.5, '9': -100 } },
        (x) => {
          x[5] = x[5]! + 3.5;
          x[9] = x[9]! - 100;
        },
      ],
      [
        { allowed_token_ids: [3, 4, 5, 6] },
        (x) => {
          for (let v = 0; v < x.length; v++) if (![3, 4, 5, 6].includes(v)) x[v] = -Infinity;
        },
      ],
    ];
    for (const [extra, process] of cases) {
      const r = await call(s, '/v1/completions', { ...greedy, prompt: p, max_tokens: 10, ...extra });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(tokensOf(r.json.choices[0]), JSON.stringify(extra)).toEqual(greedyReference(s.model, p, 10, process, new Set([eosId()])));
    }
  });

  it('min_tokens, ignore_eos, stop_token_ids and skip_special_tokens around a forced EOS', async () => {
    const eos = eosId();
    const force = { logit_bias: { [String(eos)]: 100 } };
    // EOS always wins: the completion is EOS alone
    const a = await call(s, '/v1/completions', { ...greedy, prompt: PROMPT, max_tokens: 8, ...force });
    expect(tokensOf(a.json.choices[0])).toEqual([eos]);
    expect(a.json.choices[0]).toMatchObject({ text: '', finish_reason: 'stop', stop_reason: null });
    // min_tokens masks it for 4 tokens (the reference: greedy with EOS at -inf), then it ends
    const b = await call(s, '/v1/completions', { ...greedy, prompt: PROMPT, max_tokens: 8, min_tokens: 4, ...force });
    const masked = greedyReference(s.model, ids(), 4, (x) => {
      x[eos] = -Infinity;
    });
    expect(tokensOf(b.json.choices[0])).toEqual([...masked, eos]);
    // ignore_eos: EOS is sampled and kept going, to max_tokens
    const c = await call(s, '/v1/completions', { ...greedy, prompt: PROMPT, max_tokens: 3, ignore_eos: true, ...force });
    expect(tokensOf(c.json.choices[0])).toEqual([eos, eos, eos]);
    expect(c.json.choices[0].finish_reason).toBe('length');
    // skip_special_tokens false keeps "<|im_end|>" in the text
    const d = await call(s, '/v1/completions', {
      ...greedy,
      prompt: PROMPT,
      max_tokens: 3,
      ignore_eos: true,
      skip_special_tokens: false,
      ...force,
    });
    expect(d.json.choices[0].text).toBe('<|im_end|>'.repeat(3));
    // stop_token_ids: the third greedy token ends it; stop_reason is the id, its text left out
    const free = greedyReference(s.model, ids(), 6, undefined, new Set([eos]));
    const stopId = free[2]!;
    const e = await call(s, '/v1/completions', { ...greedy, prompt: PROMPT, max_tokens: 6, stop_token_ids: [stopId] });
    const upTo = free.slice(0, free.indexOf(stopId) + 1);
    expect(tokensOf(e.json.choices[0])).toEqual(upTo);
    expect(e.json.choices[0]).toMatchObject({ finish_reason: 'stop', stop_reason: stopId, text: decode(upTo.slice(0, -1)) });
  });

  it('sampling: the same seed gives the same text, top_k 1 is greedy, min_p keeps only tokens that likely', async () => {
    const body = { model: 'tiny', prompt: PROMPT, max_tokens: 12, temperature: 1.2, seed: 11 };
    const [x, y] = await Promise.all([client.completions.create(body), client.completions.create(body)]);
    expect(x.choices[0]!.text).toBe(y.choices[0]!.text);
    expect((await client.completions.create({ ...body, seed: 12 })).choices[0]!.text).not.toBe(x.choices[0]!.text);
    const k1 = await call(s, '/v1/completions', { ...greedy, ...body, top_k: 1, temperature: 1 });
    expect(tokensOf(k1.json.choices[0])).toEqual(greedyReference(s.model, ids(), 12, undefined, new Set([eosId()])));
    const mp = await call(s, '/v1/completions', { ...greedy, ...body, min_p: 0.3, logprobs: 1 });
    const out = tokensOf(mp.json.choices[0]);
    out.forEach((id, t) => {
      const lp = logSoftmax(nextLogits(s.model, [...ids(), ...out.slice(0, t)]), 1.2);
      expect(lp[id]!).toBeGreaterThanOrEqual(Math.max(...lp) + Math.log(0.3) - 1e-6);
    });
  });

  it('n, best_of = n, truncate_prompt_tokens, return_token_ids, prompt_logprobs, user and add_special_tokens', async () => {
    const p = ids();
    const r = await call(s, '/v1/completions', {
      model: 'tiny',
      prompt: p,
      n: 2,
      best_of: 2,
      max_tokens: 3,
      seed: 1,
      return_token_ids: true,
      prompt_logprobs: 2,
      user: 'someone',
      add_special_tokens: true,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices.map((c: { index: number }) => c.index)).toEqual([0, 1]);
    const c = r.json.choices[0];
    expect(c.prompt_token_ids).toEqual(p);
    expect(c.token_ids).toHaveLength(r.json.usage.completion_tokens / 2);
    expect(c.prompt_logprobs[0]).toBeNull();
    // position t: the actual token (with its rank) and the two most likely
    const t = 3;
    const ref = logSoftmax(nextLogits(s.model, p.slice(0, t)));
    const entry = c.prompt_logprobs[t] as Record<string, { logprob: number; rank: number; decoded_token: string }>;
    expect(entry[String(p[t])]!.logprob).toBeCloseTo(ref[p[t]!]!, 4);
    expect(entry[String(p[t])]!.rank).toBe(1 + [...ref].filter((x) => x > ref[p[t]!]!).length);
    expect(Object.keys(entry).length).toBeGreaterThanOrEqual(2);
    const cut = await call(s, '/v1/completions', { model: 'tiny', prompt: p, max_tokens: 2, truncate_prompt_tokens: 3 });
    expect(cut.json.usage.prompt_tokens).toBe(3);
  });

  it('refuses what it does not implement with a 400 naming the parameter; no-op values pass', async () => {
    const bad: [Record<string, unknown>, string, RegExp][] = [
      [{ suffix: 'x' }, 'suffix', /fill-in-the-middle/],
      [{ use_beam_search: true }, 'use_beam_search', /beam search/],
      [{ best_of: 3 }, 'best_of', /best_of other than n/],
      [{ guided_json: {} }, 'guided_json', /guided decoding/],
      [{ logits_processors: ['x'] }, 'logits_processors', /logits processors/],
      [{ frobnicate: 1 }, 'frobnicate', /unknown parameter frobnicate/],
      [{ stream_options: { include_usage: true } }, 'stream_options', /needs stream: true/],
      [{ logprobs: 21 }, 'logprobs', /logprobs/],
      [{ presence_penalty: 3 }, 'presence_penalty', /presence_penalty/],
      [{ logit_bias: { '999999': 1 } }, 'logit_bias', /not in the vocabulary/],
      [{ stop_token_ids: [999999] }, 'stop_token_ids', /not in the vocabulary/],
      [{ priority: 1 }, 'priority', /priority/],
      [{ spaces_between_special_tokens: false }, 'spaces_between_special_tokens', /spaces_between_special_tokens/],
    ];
    for (const [extra, param, message] of bad) {
      const r = await call(s, '/v1/completions', { model: 'tiny', prompt: 'x', max_tokens: 1, ...extra });
      expect([r.status, r.json.error.param], JSON.stringify(extra)).toEqual([400, param]);
      expect(r.json.error.message).toMatch(message);
      expect(r.json).toMatchObject({ object: 'error', error: { type: 'BadRequestError', code: 400 } });
    }
    for (const extra of [
      { suffix: null },
      { use_beam_search: false },
      { best_of: 1 },
      { length_penalty: 1 },
      { spaces_between_special_tokens: true },
      { priority: 0 },
    ]) {
      expect(
        (await call(s, '/v1/completions', { model: 'tiny', prompt: 'x', max_tokens: 1, ...extra })).status,
        JSON.stringify(extra),
      ).toBe(200);
    }
    // the openai client surfaces the parameter
    await expect(client.completions.create({ model: 'tiny', prompt: 'x', suffix: 'y' })).rejects.toMatchObject({
      status: 400,
      param: 'suffix',
    });
  });
});

describe('/v1/chat/completions', () => {
  const messages = [{ role: 'user' as const, content: 'Ann has 12 apples.' }];
  const chatml = () => s.tokenizer.encode('<|im_start|>user\nAnn has 12 apples.<|im_end|>\n<|im_start|>assistant\n');

  it("vLLM's response shape; the text of a greedy reference over the rendered template; top_logprobs", async () => {
    const r = await client.chat.completions.create({
      model: 'tiny',
      messages,
      max_tokens: 6,
      temperature: 0,
      logprobs: true,
      top_logprobs: 2,
    });
    expect(r).toMatchObject({ id: expect.stringMatching(/^chatcmpl-/), object: 'chat.completion', model: 'tiny' });
    const ref = greedyReference(s.model, chatml(), 6, undefined, new Set([eosId()]));
    const c = r.choices[0]!;
    expect(c).toMatchObject({
      index: 0,
      message: { role: 'assistant', content: decode(ref) },
      finish_reason: ref.at(-1) === eosId() ? 'stop' : 'length',
    });
    expect(c.logprobs!.content!.map((x) => x.token)).toEqual(ref.map((id) => s.tokenizer.decode([id])));
    c.logprobs!.content!.forEach((x, t) => {
      const lp = logSoftmax(nextLogits(s.model, [...chatml(), ...ref.slice(0, t)]));
      expect(x.logprob).toBeCloseTo(lp[ref[t]!]!, 4);
      expect(x.bytes).toEqual([...s.tokenizer.tokenBytes(ref[t]!)]);
      expect(x.top_logprobs).toHaveLength(2);
      expect(x.top_logprobs[0]!.logprob).toBeGreaterThanOrEqual(x.top_logprobs[1]!.logprob);
    });
    expect(r.usage).toEqual({ prompt_tokens: chatml().length, completion_tokens: ref.length, total_tokens: chatml().length + ref.length });
  });

  it('stream: the role first, then content deltas that add up to the whole answer, the usage chunk last', async () => {
    const body = { model: 'tiny', messages, max_tokens: 8, temperature: 0.7, seed: 5, n: 2 };
    const whole = await client.chat.completions.create(body);
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }))
      chunks.push(c);
    expect(chunks.at(-1)!.usage).toEqual(whole.usage);
    for (const choice of whole.choices) {
      const mine = chunks.flatMap((c) => c.choices.filter((x) => x.index === choice.index));
      expect(mine[0]!.delta).toEqual({ role: 'assistant', content: '' });
      expect(mine.map((x) => x.delta.content ?? '').join('')).toBe(choice.message.content);
      expect(mine.at(-1)!.finish_reason).toBe(choice.finish_reason);
      expect(chunks[0]).toMatchObject({ object: 'chat.completion.chunk', model: 'tiny' });
    }
  });

  it('chat_template_kwargs, add_generation_prompt, a request chat_template; tools and other refusals name the parameter', async () => {
    const rendered = async (extra: Record<string, unknown>) =>
      (await call(s, '/v1/chat/completions', { model: 'tiny', messages, max_tokens: 1, ...extra })).json.usage?.prompt_tokens;
    expect(await rendered({ chat_template_kwargs: { enable_thinking: false } })).toBe(
      s.tokenizer.encode('<|im_start|>user\nAnn has 12 apples.<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n').length,
    );
    expect(await rendered({ add_generation_prompt: false })).toBe(
      s.tokenizer.encode('<|im_start|>user\nAnn has 12 apples.<|im_end|>\n').length,
    );
    expect(
      await rendered({
        chat_template: '{% for m in messages %}{{ m.content }}{% endfor %}|{{ extra_var }}',
        chat_template_kwargs: { extra_var: 'X' },
      }),
    ).toBe(s.tokenizer.encode('Ann has 12 apples.|X').length);
    expect(
      await rendered({
        tools: [],
        response_format: { type: 'text' },
        tool_choice: 'none',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Ann has 12 apples.' }] }],
      }),
    ).toBe(chatml().length);
    for (const [extra, param] of [
      [{ tools: [{ type: 'function', function: { name: 'f' } }] }, 'tools'],
      [{ response_format: { type: 'json_object' } }, 'response_format.type'],
      [{ top_logprobs: 2 }, 'top_logprobs'],
      [{ chat_template_kwargs: { custom: 1 } }, 'chat_template_kwargs'],
      [{ echo: true }, 'echo'],
      [{ continue_final_message: true }, 'continue_final_message'],
      [{ messages: [{ role: 'user', content: 'x', name: 'bob' }] }, 'messages.0'],
      [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, 'messages.0.content'],
    ] as [Record<string, unknown>, string][]) {
      const r = await call(s, '/v1/chat/completions', { model: 'tiny', messages, max_tokens: 1, ...extra });
      expect([r.status, r.json.error?.param], JSON.stringify(extra)).toEqual([400, param]);
    }
  });
});

describe('/metrics', () => {
  it('Prometheus text with the request, token and queue counters', async () => {
    const before = (await call(s, '/metrics')).text;
    const gen = (t: string) => Number(/^vllm:generation_tokens_total\{model_name="tiny"\} (\d+)$/m.exec(t)?.[1]);
    const r = await call(s, '/v1/completions', { model: 'tiny', prompt: PROMPT, n: 3, max_tokens: 5, seed: 2 });
    const after = await call(s, '/metrics');
    expect(after.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(gen(after.text) - gen(before)).toBe(r.json.usage.completion_tokens);
    for (const line of [
      '# TYPE vllm:num_requests_running gauge',
      'vllm:num_requests_waiting{model_name="tiny"} 0',
      '# TYPE vllm:e2e_request_latency_seconds histogram',
    ])
      expect(after.text).toContain(line);
    expect(after.text).toMatch(/^rlvr:http_requests_total\{route="\/v1\/completions",status="200"\} \d+$/m);
    expect(after.text).toMatch(/^vllm:request_success_total\{finished_reason="(stop|length)",model_name="tiny"\} \d+$/m);
  });
});
