import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { loadModel, loadTokenizer, type Qwen3Model, type Tokenizer } from '@rlvr/policy';
import { runServe } from './command.js';
import { httpSampler } from '../samplers/http-sampler.js';
import { policySampler } from '../samplers/policy-sampler.js';
import { chatmlTemplate } from '@rlvr/policy';
import { sampleGroups, type SampleOptionsInput } from '../samplers/sample-groups.js';
import { startPolicyServer, type PolicyServer } from './server.js';
import { describeSamplerContract } from '../test-utils/sampler-contract.js';
import { tinyModelDir, useCpu } from '../test-utils/tiny-policy.js';

const io = () => {
  const out = { stdout: '', stderr: '' };
  return { out, io: { stdout: { write: (s: string) => (out.stdout += s) }, stderr: { write: (s: string) => (out.stderr += s) } } };
};

let dir: { dir: string; remove(): void };
let server: PolicyServer;
let dispose: () => void;
let model: Qwen3Model;
let tokenizer: Tokenizer;
let banner: string;

beforeAll(async () => {
  await useCpu();
  dir = await tinyModelDir();
  const { out, io: cli } = io();
  const r = await runServe(
    [
      '--model',
      dir.dir,
      '--port',
      '0',
      '--served-model-name',
      'tiny',
      '--backend',
      'cpu',
      '--quiet',
      '--batch-size',
      '8',
      '--workers',
      '1',
    ],
    cli,
  );
  expect(r.code, out.stderr).toBe(0);
  server = r.server!;
  dispose = r.dispose!;
  banner = out.stdout;
  // the same checkpoint, in process, for the reference generations
  model = loadModel(dir.dir, { trainable: false });
  tokenizer = loadTokenizer(dir.dir);
});
afterAll(async () => {
  await server?.close();
  dispose?.();
  model?.dispose();
  tokenizer?.free();
  dir?.remove();
});

const post = async (path: string, body: unknown) => {
  const res = await fetch(server.url.replace(/\/v1$/, '') + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
};
const PROMPTS = () =>
  ['Ann has 12 apples.', 'Tom has 80 stones. He buys 53 more. How many stones does Tom have?'].map((t) => tokenizer.encode(t));
const OPTIONS: SampleOptionsInput = { groupSize: 3, maxNewTokens: 12, temperature: 0.9, topK: 30, topP: 0.95, seed: 5 };

// One request at a time: requests in flight together share the decode batch, and how they
// overlap (arrival timing) can move a completion's floats in the last bits, as with vLLM.
describeSamplerContract('httpSampler against rlvr-serve on loopback', async () => ({
  sampler: httpSampler(
    { baseUrl: server.url, model: 'tiny', maxRetries: 0, concurrency: 1 },
    { tokenBytes: policySampler(model, tokenizer).tokenBytes },
  ),
  prompts: PROMPTS().map((tokens) => ({ tokens })),
  stop: 'e',
}));

describe('rlvr-serve', () => {
  it('prints where it serves and answers /health and /v1/models', async () => {
    expect(banner).toMatch(new RegExp(`serving tiny \\(0\\.\\d+M parameters\\) on http://127\\.0\\.0\\.1:${server.port}/v1`));
    expect((await fetch(server.url.replace(/\/v1$/, '/health'))).status).toBe(200);
    const models = (await (await fetch(`${server.url}/models`)).json()) as { data: { id: string; max_model_len: number }[] };
    expect(models.data.map((m) => [m.id, m.max_model_len])).toEqual([['tiny', 256]]);
  });

  it("httpSampler through the server gives the in-process sampler's batch for the same seed (token prompts)", async () => {
    const prompts = PROMPTS().map((tokens) => ({ tokens }));
    const local = await sampleGroups(prompts, policySampler(model, tokenizer), OPTIONS);
    const remote = await sampleGroups(
      prompts,
      httpSampler({ baseUrl: server.url, model: 'tiny' }, { tokenBytes: policySampler(model, tokenizer).tokenBytes }),
      OPTIONS,
    );
    expect(remote.errors.every((e) => e === null)).toBe(true);
    expect(remote.batch.completionTokens).toEqual(local.batch.completionTokens);
    expect(remote.batch.completionOffsets).toEqual(local.batch.completionOffsets);
    expect(remote.batch.behaviorLogprobs).toEqual(local.batch.behaviorLogprobs);
    expect(remote.batch.finish).toEqual(local.batch.finish);
    expect(remote.batch.promptTokens).toEqual(local.batch.promptTokens);
    expect(remote.texts).toEqual(local.texts);
  });

  it('text prompts and chat messages (ChatML, no tokenizer_config.json) match the in-process sampler too, with stop strings', async () => {
    const texts = [{ text: 'Ann has 12 apples.' }];
    const opts = { ...OPTIONS, stop: ['e'] };
    const local = await sampleGroups(texts, policySampler(model, tokenizer), opts);
    const remote = await sampleGroups(texts, httpSampler({ baseUrl: server.url, model: 'tiny' }), opts, {
      tokenBytes: policySampler(model, tokenizer).tokenBytes,
    });
    expect(remote.batch.completionTokens).toEqual(local.batch.completionTokens);
    expect(remote.texts).toEqual(local.texts);
    expect(remote.texts.some((t) => t.includes('e'))).toBe(false);

    const messages = [{ messages: [{ role: 'user' as const, content: 'Ann has 12 apples.' }] }];
    const localChat = await sampleGroups(
      messages,
      policySampler(model, tokenizer, {}, { applyChatTemplate: chatmlTemplate, enableThinking: true }),
      OPTIONS,
    );
    const remoteChat = await sampleGroups(messages, httpSampler({ baseUrl: server.url, model: 'tiny', endpoint: 'chat' }), OPTIONS, {
      tokenBytes: policySampler(model, tokenizer).tokenBytes,
    });
    expect(remoteChat.batch.completionTokens).toEqual(localChat.batch.completionTokens);
    expect(remoteChat.texts).toEqual(localChat.texts);
  });

  it('httpSampler with stream and echo through the server: the same batch as one-shot, and text prompts get their token ids', async () => {
    const opts = { ...OPTIONS, stop: ['e'] };
    const bytes = policySampler(model, tokenizer).tokenBytes;
    const tokenPrompts = PROMPTS().map((tokens) => ({ tokens }));
    const whole = await sampleGroups(tokenPrompts, httpSampler({ baseUrl: server.url, model: 'tiny' }, { tokenBytes: bytes }), opts);
    const streamed = await sampleGroups(
      tokenPrompts,
      httpSampler({ baseUrl: server.url, model: 'tiny', stream: true }, { tokenBytes: bytes }),
      opts,
    );
    expect(streamed.batch).toEqual(whole.batch);
    expect(streamed.texts).toEqual(whole.texts);
    const texts = [{ text: 'Ann has 12 apples.' }, { text: 'Tom has 80 stones.' }];
    const local = await sampleGroups(texts, policySampler(model, tokenizer), opts);
    for (const stream of [false, true]) {
      const echoed = await sampleGroups(
        texts,
        httpSampler({ baseUrl: server.url, model: 'tiny', echo: true, stream }, { tokenBytes: bytes }),
        opts,
      );
      expect(echoed.batch.promptTokens).toEqual(local.batch.promptTokens);
      expect(echoed.batch.completionTokens).toEqual(local.batch.completionTokens);
      expect(echoed.batch.behaviorLogprobs).toEqual(local.batch.behaviorLogprobs);
      expect(echoed.texts).toEqual(local.texts);
    }
  });

  it('a list of prompts: choice i*n+j is completion j of prompt i; token strings without return_tokens_as_token_ids; usage', async () => {
    const [a, b] = PROMPTS();
    const { status, json } = await post('/v1/completions', {
      model: 'tiny',
      prompt: [a, b],
      n: 2,
      max_tokens: 4,
      temperature: 0,
      logprobs: 0,
    });
    expect(status).toBe(200);
    expect(json.choices.map((c: { index: number }) => c.index)).toEqual([0, 1, 2, 3]);
    const one = await post('/v1/completions', {
      model: 'tiny',
      prompt: b,
      n: 1,
      max_tokens: 4,
      temperature: 0,
      logprobs: 0,
      return_tokens_as_token_ids: true,
    });
    const ids = one.json.choices[0].logprobs.tokens.map((t: string) => Number(t.slice('token_id:'.length)));
    expect(json.choices[2].logprobs.tokens).toEqual(ids.map((id: number) => new TextDecoder().decode(tokenizer.tokenBytes(id))));
    expect(json.choices[2].text).toBe(json.choices[2].logprobs.tokens.filter((t: string) => t !== '<|im_end|>').join(''));
    // as OpenAI and vLLM count: each prompt once, every completion token
    expect(json.usage).toEqual({ prompt_tokens: a!.length + b!.length, completion_tokens: 16, total_tokens: a!.length + b!.length + 16 });
    const noLp = await post('/v1/completions', { model: 'tiny', prompt: 'Ann', max_tokens: 2 });
    expect(noLp.json.choices[0].logprobs).toBeNull();
  });

  it('answers bad requests with 400 naming the field, and wrong models, routes and methods with 404 / 405', async () => {
    const cases: [string, unknown, number, RegExp][] = [
      ['/v1/completions', 'not json', 400, /not JSON/],
      ['/v1/completions', [1, 2], 400, /JSON object/],
      ['/v1/completions', { model: 'tiny' }, 400, /prompt/],
      ['/v1/completions', { model: 'tiny', prompt: 'x', temperature: -1 }, 400, /temperature/],
      ['/v1/completions', { model: 'tiny', prompt: 'x', top_p: 0 }, 400, /top_p/],
      ['/v1/completions', { model: 'tiny', prompt: 'x', logprobs: 21 }, 400, /logprobs/],
      ['/v1/completions', { model: 'tiny', prompt: [] }, 400, /prompt list is empty/],
      ['/v1/completions', { model: 'tiny', prompt: [1, 99999] }, 400, /token id 99999 at position 1/],
      ['/v1/completions', { model: 'tiny', prompt: [1, 2], max_tokens: 300 }, 400, /maximum context length is 256 tokens/],
      ['/v1/completions', { model: 'other', prompt: 'x' }, 404, /The model `other` does not exist/],
      ['/v1/chat/completions', { model: 'tiny', messages: [] }, 400, /messages/],
      ['/v1/chat/completions', { model: 'tiny', messages: [{ role: 'robot', content: 'x' }] }, 400, /role/],
      ['/v1/embeddings', { model: 'tiny' }, 404, /no route \/v1\/embeddings/],
    ];
    for (const [path, body, status, message] of cases) {
      const r = await post(path, body);
      expect([path, r.status], JSON.stringify(body)).toEqual([path, status]);
      expect(r.json.error.message, JSON.stringify(body)).toMatch(message);
    }
    const get = await fetch(`${server.url}/completions`);
    expect(get.status).toBe(405);
  });

  it('leaks no tensors across requests', async () => {
    await post('/v1/completions', { model: 'tiny', prompt: 'Ann', max_tokens: 3 });
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) await post('/v1/completions', { model: 'tiny', prompt: 'Ann has', n: 2, max_tokens: 5, logprobs: 0 });
    await post('/v1/completions', { model: 'tiny', prompt: [1, 99999] });
    expect(tf.memory().numTensors).toBe(before);
  });

  it('answers /health while decoding; a client that disconnects cancels its request; nothing leaks', async () => {
    const lines: string[] = [];
    const own = await startPolicyServer(
      { model, tokenizer },
      { port: 0, servedModelName: 'tiny' },
      { info: (m) => lines.push(m), warn: (m) => lines.push(m) },
    );
    try {
      const call = (body: unknown, signal?: AbortSignal) =>
        fetch(`${own.url}/completions`, { method: 'POST', body: JSON.stringify(body), signal });
      await (await call({ model: 'tiny', prompt: 'Ann', max_tokens: 2 })).json();
      const before = tf.memory().numTensors;
      const ac = new AbortController();
      const long = call({ model: 'tiny', prompt: 'Ann', n: 8, max_tokens: 240 }, ac.signal);
      let longSettled = false;
      long.then(
        () => (longSettled = true),
        () => (longSettled = true),
      );
      // the server answers /health between decoding steps
      expect((await fetch(own.url.replace(/\/v1$/, '/health'))).status).toBe(200);
      expect(longSettled).toBe(false);
      ac.abort();
      await expect(long).rejects.toThrow();
      const next = await call({ model: 'tiny', prompt: 'Ann', max_tokens: 2 });
      expect(next.status).toBe(200);
      await next.json();
      expect(lines).toContain('POST /v1/completions: client disconnected, request cancelled');
      expect(tf.memory().numTensors).toBe(before);
    } finally {
      await own.close();
    }
  });

  it('serves concurrent requests in one batch, each with the result it gets alone', async () => {
    const body = (seed: number) => ({
      model: 'tiny',
      prompt: PROMPTS()[0],
      n: 2,
      max_tokens: 6,
      seed,
      logprobs: 0,
      return_tokens_as_token_ids: true,
    });
    const alone = await Promise.all([post('/v1/completions', body(1)), post('/v1/completions', body(2))]);
    const again = await post('/v1/completions', body(2));
    expect(alone[1]!.json.choices).toEqual(again.json.choices);
    expect(alone[0]!.json.choices).not.toEqual(again.json.choices);
  });
});

describe('rlvr-serve command line', () => {
  it("renders chat with the model directory's tokenizer_config.json template", async () => {
    const template =
      '{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}';
    writeFileSync(join(dir.dir, 'tokenizer_config.json'), JSON.stringify({ chat_template: template }));
    const { out, io: cli } = io();
    const r = await runServe(['--model', dir.dir, '--port', '0', '--backend', 'cpu', '--quiet'], cli);
    try {
      expect(r.code, out.stderr).toBe(0);
      const res = await fetch(`${r.server!.url}/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: dir.dir, messages: [{ role: 'user', content: 'Ann has 12 apples.' }], max_tokens: 2 }),
      });
      const json = (await res.json()) as { usage: { prompt_tokens: number } };
      expect(json.usage.prompt_tokens).toBe(tokenizer.encode('[user] Ann has 12 apples.\n[assistant]').length);
      expect(out.stderr).not.toMatch(/ChatML/);
    } finally {
      await r.server?.close();
      r.dispose?.();
      rmSync(join(dir.dir, 'tokenizer_config.json'));
    }
  });

  it('exits 2 on bad usage and 1 on a directory that is not a model', async () => {
    const a = io();
    expect((await runServe([], a.io)).code).toBe(2);
    expect(a.out.stderr).toBe('rlvr-serve: --model: is required\n(rlvr-serve --help lists the options)\n');
    const b = io();
    expect((await runServe(['--model', dir.dir, '--port', 'x'], b.io)).code).toBe(2);
    expect(b.out.stderr).toMatch(/^rlvr-serve: --port: must be an integer from 0 to 65535 \(got "x"\)\n/);
    const c = io();
    expect((await runServe(['--model', '/nonexistent/model'], c.io)).code).toBe(1);
    expect(c.out.stderr).toMatch(/\nrlvr-serve: \/nonexistent\/model: model directory not found \(not a directory\)\n$/);
    const d = io();
    expect((await runServe(['--model', '/tmp', '--backend', 'cpu'], d.io)).code).toBe(1);
    expect(d.out.stderr).toMatch(/rlvr-serve: \/tmp: not a model directory \(no config\.json there\)\n$/);
    const e = io();
    expect((await runServe(['--help'], e.io)).code).toBe(0);
    expect(e.out.stdout).toMatch(/rlvr-serve --model DIR/);
  });
});
