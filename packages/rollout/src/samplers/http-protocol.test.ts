import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseResponse, requestBody } from './http-protocol.js';
import { assembleStream, StreamAssembler } from './http-stream.js';
import { RolloutError } from '../errors.js';

const choice = (index: number, over: Record<string, unknown> = {}) => ({
  index,
  text: ' 4',
  logprobs: { tokens: ['token_id:220', 'token_id:19'], token_logprobs: [-0.5, -0.25], top_logprobs: [], text_offset: [0, 1] },
  finish_reason: 'length',
  stop_reason: null,
  ...over,
});
const params = { temperature: 0.6, topP: 0.95, topK: 20, maxNewTokens: 2, stop: [], seed: 3 };

describe('parseResponse (completions)', () => {
  it('reads "token_id:N" strings, log-probs and finish reasons, in index order', () => {
    const out = parseResponse('completions', { choices: [choice(1, { finish_reason: 'stop' }), choice(0)] }, { tokens: [1] }, 2);
    expect(out.promptTokens).toEqual([1]);
    expect(out.completions).toEqual([
      { tokens: [220, 19], logprobs: [-0.5, -0.25], finish: 'length', text: ' 4' },
      { tokens: [220, 19], logprobs: [-0.5, -0.25], finish: 'stop', text: ' 4' },
    ]);
  });

  it("prefers vLLM's token_ids lists and takes prompt_token_ids for text prompts", () => {
    const out = parseResponse('completions', { choices: [choice(0, { token_ids: [7, 8], prompt_token_ids: [5, 6] })] }, { text: 'hi' }, 1);
    expect(out.completions[0]!.tokens).toEqual([7, 8]);
    expect(out.promptTokens).toEqual([5, 6]);
  });

  it('turns an unknown finish reason into an error completion without tokens', () => {
    const out = parseResponse('completions', { choices: [choice(0, { finish_reason: 'abort' })] }, { tokens: [1] }, 1);
    expect(out.completions[0]).toEqual({ tokens: [], finish: 'error', error: 'server ended the completion with finish_reason "abort"' });
  });

  it.each([
    ['missing choices', { object: 'error' }, /choices/],
    ['wrong choice count', { choices: [choice(0)] }, /asked for n=2 completions, got 1 choices/],
    ['repeated index', { choices: [choice(0), choice(0)] }, /choice index 0 is out of range or repeated/],
    [
      'text tokens instead of ids',
      { choices: [choice(0, { logprobs: { tokens: [' ', '4'], token_logprobs: [-1, -1] } }), choice(1)] },
      /token 0 is " ", not "token_id:N": the server must support return_tokens_as_token_ids/,
    ],
    ['no log-probs', { choices: [choice(0, { logprobs: null }), choice(1)] }, /no log-probs in the choice/],
    [
      'a null log-prob',
      { choices: [choice(0, { logprobs: { tokens: ['token_id:1'], token_logprobs: [null] } }), choice(1)] },
      /log-prob of token 0 is null/,
    ],
    [
      'ids and log-probs of different lengths',
      { choices: [choice(0, { token_ids: [1, 2, 3] }), choice(1)] },
      /3 token ids but 2 log-probs/,
    ],
  ])('rejects %s', (_, body, message) => {
    let err: unknown;
    try {
      parseResponse('completions', body, { tokens: [1] }, 2);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RolloutError);
    expect((err as RolloutError).code).toBe('invalid_response');
    expect((err as Error).message).toMatch(message);
  });
});

describe('parseResponse (chat)', () => {
  it('reads the log-prob content list', () => {
    const body = {
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: '\\boxed{4}' },
          logprobs: { content: [{ token: 'token_id:59', logprob: -0.125, bytes: [92], top_logprobs: [] }] },
          finish_reason: 'stop',
        },
      ],
    };
    expect(parseResponse('chat', body, { messages: [] }, 1).completions[0]).toEqual({
      tokens: [59],
      logprobs: [-0.125],
      finish: 'stop',
      text: '\\boxed{4}',
    });
  });
});

describe('requestBody', () => {
  it('writes vLLM field names, leaves optional ones out, and lets extra fields add but not replace', () => {
    expect(requestBody('completions', 'm', { tokens: [1, 2] }, 4, params, {})).toEqual({
      model: 'm',
      prompt: [1, 2],
      n: 4,
      max_tokens: 2,
      temperature: 0.6,
      top_p: 0.95,
      top_k: 20,
      seed: 3,
      return_tokens_as_token_ids: true,
      logprobs: 0,
    });
    const chat = requestBody(
      'chat',
      'm',
      { messages: [{ role: 'user', content: 'q' }] },
      1,
      { ...params, topK: 0, stop: ['\n\n'] },
      { top_p: 1, n: 9, chat_template_kwargs: { enable_thinking: false } },
    );
    expect(chat).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'q' }],
      n: 1,
      max_tokens: 2,
      temperature: 0.6,
      top_p: 0.95,
      seed: 3,
      stop: ['\n\n'],
      return_tokens_as_token_ids: true,
      logprobs: true,
      top_logprobs: 0,
      chat_template_kwargs: { enable_thinking: false },
    });
  });
});

describe('hostile responses (issue 19 item 5)', () => {
  it('finish_reason is looked up as an own property: "constructor", "__proto__", "toString" are errors', () => {
    for (const reason of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '']) {
      const out = parseResponse('completions', { choices: [choice(0, { finish_reason: reason })] }, { tokens: [1] }, 1);
      expect(out.completions[0], reason).toEqual({
        tokens: [],
        finish: 'error',
        error: `server ended the completion with finish_reason ${JSON.stringify(reason)}`,
      });
    }
  });

  it('token ids over the int32 range are refused, not wrapped (token_id:4294967297 was stored as 1)', () => {
    const big = (tokens: string[]) => ({ choices: [choice(0, { logprobs: { tokens, token_logprobs: tokens.map(() => -1) } })] });
    expect(() => parseResponse('completions', big(['token_id:4294967297']), { tokens: [1] }, 1)).toThrow(
      /token 0 has id 4294967297, over the largest token id 2147483647/,
    );
    expect(() => parseResponse('completions', big(['token_id:99999999999999999999']), { tokens: [1] }, 1)).toThrow(/not "token_id:N"/);
    expect(parseResponse('completions', big(['token_id:2147483647']), { tokens: [1] }, 1).completions[0]!.tokens).toEqual([2147483647]);
    expect(() => parseResponse('completions', { choices: [choice(0, { token_ids: [1, 2 ** 31] })] }, { tokens: [1] }, 1)).toThrow(
      RolloutError,
    );
  });

  it('property: any finish_reason and token strings give either the documented completion or invalid_response', () => {
    const hostile = fc.oneof(
      fc.string(),
      fc.constantFrom(
        'stop',
        'length',
        'constructor',
        '__proto__',
        'token_id:1',
        'token_id:-1',
        'token_id:1.5',
        'token_id:2147483648',
        'token_id:0x10',
        ' token_id:1',
        'token_id:١',
      ),
    );
    fc.assert(
      fc.property(
        hostile,
        fc.array(
          fc.oneof(
            hostile,
            fc.nat({ max: 2 ** 32 }).map((n) => `token_id:${n}`),
          ),
          { maxLength: 5 },
        ),
        (finish, tokens) => {
          let out;
          try {
            out = parseResponse(
              'completions',
              { choices: [choice(0, { finish_reason: finish, logprobs: { tokens, token_logprobs: tokens.map(() => -1) } })] },
              { tokens: [1] },
              1,
            );
          } catch (e) {
            expect(e).toBeInstanceOf(RolloutError);
            expect((e as RolloutError).code).toBe('invalid_response');
            return;
          }
          const c = out.completions[0]!;
          if (finish === 'stop' || finish === 'length') {
            expect(c.finish).toBe(finish);
            expect(c.tokens).toHaveLength(tokens.length);
            for (const [i, id] of c.tokens.entries()) {
              expect(Number.isInteger(id) && id >= 0 && id <= 2 ** 31 - 1).toBe(true);
              expect(tokens[i]).toBe(`token_id:${id}`);
            }
          } else expect(c).toMatchObject({ finish: 'error', tokens: [] });
        },
      ),
      { numRuns: 300, seed: 19 },
    );
  });
});

describe('echo and streams', () => {
  it('an echoed text prompt: its ids come from the first usage.prompt_tokens tokens, the text and log-probs after them are the completion', () => {
    const body = {
      usage: { prompt_tokens: 2 },
      choices: [
        choice(0, {
          text: 'hi 4',
          logprobs: { tokens: ['token_id:5', 'token_id:6', 'token_id:220', 'token_id:19'], token_logprobs: [null, -0.1, -0.5, -0.25] },
        }),
      ],
    };
    const out = parseResponse('completions', body, { text: 'hi' }, 1, { echo: true });
    expect(out.promptTokens).toEqual([5, 6]);
    expect(out.completions).toEqual([{ tokens: [220, 19], logprobs: [-0.5, -0.25], finish: 'length', text: ' 4' }]);
    expect(() => parseResponse('completions', { ...body, usage: undefined }, { text: 'hi' }, 1, { echo: true })).toThrow(
      /needs usage\.prompt_tokens/,
    );
    expect(() => parseResponse('completions', body, { text: 'other' }, 1, { echo: true })).toThrow(/does not start with the prompt/);
    expect(requestBody('completions', 'm', { text: 'hi' }, 1, params, {}, { stream: false, echo: true, returns: 'tokens' }).echo).toBe(
      true,
    );
    expect(
      requestBody('completions', 'm', { tokens: [1] }, 1, params, {}, { stream: false, echo: true, returns: 'tokens' }).echo,
    ).toBeUndefined();
  });

  it('assembleStream adds chunks up to the one-shot response; a stream without [DONE] or with an error event is refused', () => {
    const sse = (events: unknown[], done = true) =>
      events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + (done ? 'data: [DONE]\n\n' : '');
    const chunk = (index: number, text: string, token: string, lp: number, finish: string | null = null) => ({
      choices: [{ index, text, logprobs: { tokens: [token], token_logprobs: [lp] }, finish_reason: finish }],
    });
    const text = sse([
      chunk(1, ' ', 'token_id:220', -0.5),
      chunk(0, ' ', 'token_id:220', -0.5),
      chunk(0, '4', 'token_id:19', -0.25, 'length'),
      chunk(1, '4', 'token_id:19', -0.25, 'stop'),
      { choices: [], usage: { prompt_tokens: 1, completion_tokens: 4 } },
    ]);
    const whole = assembleStream('completions', text);
    expect(parseResponse('completions', whole, { tokens: [1] }, 2)).toEqual(
      parseResponse('completions', { choices: [choice(0), choice(1, { finish_reason: 'stop' })] }, { tokens: [1] }, 2),
    );
    expect(() => assembleStream('completions', sse([chunk(0, ' ', 'token_id:220', -0.5)], false))).toThrow(/without \[DONE\]/);
    expect(() => assembleStream('completions', sse([{ object: 'error', error: { message: 'boom' } }]))).toThrow(/failed mid-stream: boom/);
    const chat = assembleStream(
      'chat',
      sse([
        { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] },
        {
          choices: [
            { index: 0, delta: { content: 'Hi' }, logprobs: { content: [{ token: 'token_id:3', logprob: -1 }] }, finish_reason: 'stop' },
          ],
        },
      ]),
    );
    expect(parseResponse('chat', chat, { messages: [] }, 1).completions).toEqual([
      { tokens: [3], logprobs: [-1], finish: 'stop', text: 'Hi' },
    ]);
  });
});

describe('returns: text (no log-probs asked)', () => {
  const text = { stream: false, echo: false, returns: 'text' as const };
  it('asks for neither log-probs nor token ids, on both endpoints', () => {
    const c = requestBody('completions', 'm', { tokens: [1] }, 2, params, {}, text);
    expect(c).toEqual({ model: 'm', n: 2, max_tokens: 2, temperature: 0.6, top_p: 0.95, top_k: 20, seed: 3, prompt: [1] });
    const chat = requestBody('chat', 'm', { messages: [{ role: 'user', content: 'q' }] }, 1, params, {}, { ...text, stream: true });
    expect(chat).toEqual({
      model: 'm',
      n: 1,
      max_tokens: 2,
      temperature: 0.6,
      top_p: 0.95,
      top_k: 20,
      seed: 3,
      messages: [{ role: 'user', content: 'q' }],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('reads text and finish per choice and the token count from usage; the same choices as the token path gives, less the ids', () => {
    const body = {
      choices: [choice(1, { logprobs: null, finish_reason: 'stop' }), choice(0, { logprobs: null })],
      usage: { prompt_tokens: 1, completion_tokens: 4 },
    };
    const out = parseResponse('completions', body, { tokens: [1] }, 2, { returns: 'text' });
    expect(out).toEqual({
      promptTokens: [1],
      completionTokens: 4,
      completions: [
        { tokens: [], finish: 'length', text: ' 4' },
        { tokens: [], finish: 'stop', text: ' 4' },
      ],
    });
    const withIds = parseResponse('completions', { choices: [choice(0), choice(1, { finish_reason: 'stop' })] }, { tokens: [1] }, 2);
    expect(out.completions.map((c) => [c.text, c.finish])).toEqual(withIds.completions.map((c) => [c.text, c.finish]));
    expect(withIds.completions.reduce((n, c) => n + c.tokens.length, 0)).toBe(out.completionTokens);
    const chat = parseResponse(
      'chat',
      {
        choices: [{ index: 0, message: { content: 'Hi' }, finish_reason: 'tool_calls' }],
        usage: { prompt_tokens: 3, completion_tokens: 2 },
      },
      { messages: [] },
      1,
      { returns: 'text' },
    );
    expect(chat.completions).toEqual([
      { tokens: [], finish: 'error', error: 'server ended the completion with finish_reason "tool_calls"' },
    ]);
    expect(() =>
      parseResponse('completions', { choices: [choice(0, { logprobs: null })] }, { tokens: [1] }, 1, { returns: 'text' }),
    ).toThrow(/no usage\.completion_tokens/);
    expect(() =>
      parseResponse('completions', { ...body, choices: [choice(0), choice(0)] }, { tokens: [1] }, 2, { returns: 'text' }),
    ).toThrow(/choice index 0 is out of range or repeated/);
  });
});

describe('StreamAssembler', () => {
  it('gives the same response however the body is cut into pieces (CRLF events too)', () => {
    const events = [
      { choices: [{ index: 0, text: 'The ', logprobs: { tokens: ['token_id:1'], token_logprobs: [-1] }, finish_reason: null }] },
      { choices: [{ index: 1, text: 'é', logprobs: { tokens: ['token_id:2'], token_logprobs: [-0.5] }, finish_reason: 'stop' }] },
      { choices: [{ index: 0, text: '4', logprobs: { tokens: ['token_id:3'], token_logprobs: [-0.25] }, finish_reason: 'length' }] },
      { choices: [], usage: { prompt_tokens: 2, completion_tokens: 3 } },
    ];
    const body = events.map((e, i) => `data: ${JSON.stringify(e)}${i % 2 ? '\r\n\r\n' : '\n\n'}`).join('') + 'data: [DONE]\n\n';
    const whole = assembleStream('completions', body);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: body.length - 1 }), { maxLength: 12 }), (cuts) => {
        const a = new StreamAssembler('completions');
        let at = 0;
        for (const c of [...cuts].sort((x, y) => x - y)) {
          a.push(body.slice(at, c));
          at = c;
        }
        a.push(body.slice(at));
        expect(a.finish()).toEqual(whole);
      }),
      { numRuns: 200, seed: 5 },
    );
    expect(whole).toEqual({
      choices: [
        {
          index: 0,
          text: 'The 4',
          logprobs: { tokens: ['token_id:1', 'token_id:3'], token_logprobs: [-1, -0.25] },
          finish_reason: 'length',
        },
        { index: 1, text: 'é', logprobs: { tokens: ['token_id:2'], token_logprobs: [-0.5] }, finish_reason: 'stop' },
      ],
      usage: { prompt_tokens: 2, completion_tokens: 3 },
    });
  });
});
