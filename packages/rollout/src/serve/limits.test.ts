/**
 * Bounded work and clear refusals (issue 19 items 4 and 6): a 10^6-character prompt is a 400
 * naming the field, not a 500; a body over the limit gets its 413 even when the client sends the
 * whole body before reading (as Python's urllib does), then the connection closes.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, serveTiny, type Served } from '../test-utils/served.js';

let s: Served;
const LIMIT = 1024 * 1024;
beforeAll(async () => {
  s = await serveTiny(['--workers', '1']);
});
afterAll(() => s?.close());

/** Send a raw HTTP request with a declared body of `size` bytes over one socket; `whole`: write all of it before reading anything. */
function rawPost(
  port: number,
  size: number,
  mode: 'whole' | 'headers-only',
): Promise<{ head: string; body: string; closed: boolean; wrote: number }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    let wrote = 0;
    let writing = true;
    socket.on('error', (e: NodeJS.ErrnoException) => {
      // a reset after the response arrived is the server closing: keep what was read
      if (got.includes('\r\n\r\n')) return;
      reject(e);
    });
    socket.on('connect', async () => {
      socket.write(`POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
      if (mode === 'whole') {
        socket.pause(); // read nothing until the whole body is out
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        while (writing && wrote < size) {
          const n = Math.min(chunk.length, size - wrote);
          wrote += n;
          if (!socket.write(chunk.subarray(0, n))) await new Promise((r) => socket.once('drain', r));
        }
        socket.resume();
      }
    });
    const done = (closed: boolean): void => {
      const at = got.indexOf('\r\n\r\n');
      resolve({ head: got.slice(0, at), body: got.slice(at + 4), closed, wrote });
    };
    socket.on('data', (d: Buffer) => {
      got += d.toString('utf8');
      // a client that sent no body reads the whole response, then hangs up
      const length = /content-length: (\d+)/i.exec(got)?.[1];
      const at = got.indexOf('\r\n\r\n');
      if (mode === 'headers-only' && length !== undefined && at >= 0 && Buffer.byteLength(got.slice(at + 4)) >= Number(length)) {
        done(false);
        socket.destroy();
      }
    });
    socket.on('close', () => {
      writing = false;
      done(true);
    });
  });
}

describe('rlvr-serve input limits', () => {
  it('a 10^6-character prompt is a 400 naming prompt (or messages), before any tokenizing', async () => {
    const long = 'a'.repeat(1_000_000);
    const r = await call(s, '/v1/completions', { model: 'tiny', prompt: long, max_tokens: 4 });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({
      param: 'prompt',
      message: expect.stringMatching(/^prompt has 1000000 characters, at least \d+ tokens: over the model's context of 256 tokens/),
    });
    const list = await call(s, '/v1/completions', { model: 'tiny', prompt: ['ok', long], max_tokens: 4 });
    expect(list.json.error.param).toBe('prompt.1');
    const chat = await call(s, '/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: long }], max_tokens: 4 });
    expect([chat.status, chat.json.error.param]).toEqual([400, 'messages']);
    // the tokenizer's own limit (a run too long for byte-level BPE), reached through /tokenize (no context to fit)
    const run = await call(s, '/tokenize', { prompt: 'x '.repeat(10) + 'b'.repeat(20_000) });
    expect(run.status).toBe(400);
    expect(run.json.error).toMatchObject({ param: 'prompt', message: expect.stringContaining('a run of 20000 letters at character 20') });
    // the server still answers
    expect((await call(s, '/v1/completions', { model: 'tiny', prompt: 'Ann', max_tokens: 2 })).status).toBe(200);
  });

  it('more completions than a request may ask for (prompts x n) is a 400 naming n', async () => {
    const r = await call(s, '/v1/completions', { model: 'tiny', prompt: Array.from({ length: 8 }, () => 'Ann'), n: 200, max_tokens: 1 });
    expect(r.json.error).toMatchObject({
      param: 'n',
      message: '8 prompts x n = 200 is 1600 completions, over the limit of 1024 per request',
    });
  });
});

describe('413 for a body over the limit', () => {
  let small: Served;
  beforeAll(async () => {
    small = await serveTiny(['--max-body-bytes', String(LIMIT), '--workers', '1']);
  });
  afterAll(() => small?.close());

  it('reaches a client that writes its whole body before reading, then the connection closes', async () => {
    const r = await rawPost(small.server.port, 40 * LIMIT, 'whole');
    expect(r.head).toMatch(/^HTTP\/1\.1 413 /);
    expect(r.head.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(r.body)).toMatchObject({ error: { code: 413, message: `the body is larger than ${LIMIT} bytes` } });
    expect(r.closed).toBe(true);
  });

  it('is answered from the Content-Length alone, before any body byte is sent', async () => {
    const r = await rawPost(small.server.port, 40 * LIMIT, 'headers-only');
    expect(r.head).toMatch(/^HTTP\/1\.1 413 /);
    expect(r.wrote).toBe(0);
  });

  it('a chunked body that grows over the limit gets it too; the server keeps serving', async () => {
    const big = JSON.stringify({ model: 'tiny', prompt: 'x'.repeat(2 * LIMIT) });
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const res = await fetch(`${small.origin}/v1/completions`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
    expect((await call(small, '/health')).status).toBe(200);
    const m = await call(small, '/metrics');
    expect(m.text).toMatch(/^rlvr:http_requests_total\{route="\/v1\/completions",status="413"\} [3-9]$/m);
  });
});
