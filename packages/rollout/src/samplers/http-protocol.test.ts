import { describe, expect, it } from 'vitest';
import { parseResponse, requestBody } from './http-protocol.js';
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
    ['text tokens instead of ids', { choices: [choice(0, { logprobs: { tokens: [' ', '4'], token_logprobs: [-1, -1] } }), choice(1)] }, /token 0 is " ", not "token_id:N": the server must support return_tokens_as_token_ids/],
    ['no log-probs', { choices: [choice(0, { logprobs: null }), choice(1)] }, /no log-probs in the choice/],
    ['a null log-prob', { choices: [choice(0, { logprobs: { tokens: ['token_id:1'], token_logprobs: [null] } }), choice(1)] }, /log-prob of token 0 is null/],
    ['ids and log-probs of different lengths', { choices: [choice(0, { token_ids: [1, 2, 3] }), choice(1)] }, /3 token ids but 2 log-probs/],
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
    expect(parseResponse('chat', body, { messages: [] }, 1).completions[0]).toEqual({ tokens: [59], logprobs: [-0.125], finish: 'stop', text: '\\boxed{4}' });
  });
});

describe('requestBody', () => {
  it('writes vLLM field names, leaves optional ones out, and lets extra fields add but not replace', () => {
    expect(requestBody('completions', 'm', { tokens: [1, 2] }, 4, params, {})).toEqual({
      model: 'm', prompt: [1, 2], n: 4, max_tokens: 2, temperature: 0.6, top_p: 0.95, top_k: 20, seed: 3, return_tokens_as_token_ids: true, logprobs: 0,
    });
    const chat = requestBody('chat', 'm', { messages: [{ role: 'user', content: 'q' }] }, 1, { ...params, topK: 0, stop: ['\n\n'] }, { top_p: 1, n: 9, chat_template_kwargs: { enable_thinking: false } });
    expect(chat).toEqual({
      model: 'm', messages: [{ role: 'user', content: 'q' }], n: 1, max_tokens: 2, temperature: 0.6, top_p: 0.95, seed: 3, stop: ['\n\n'],
      return_tokens_as_token_ids: true, logprobs: true, top_logprobs: 0, chat_template_kwargs: { enable_thinking: false },
    });
  });
});
