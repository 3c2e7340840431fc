/**
 * Clients that send their headers and a byte of body, then stall (issue 42): they used to hold every `maxInFlight`
 * slot until Node's 5-minute request timeout, and every request, `/health` included, got 503 `overloaded`. A body now
 * holds no in-flight slot while it arrives, must arrive within `bodyTimeoutMs` (else 408 and the connection closes),
 * the bodies being received are capped by `maxReceiving`, and `/health` is never refused for overload.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { mathReward } from '@rlvr/math-verify';
import { RewardServer } from './server.js';
import { SLOWER, body, makeCases } from './test-utils/cases.js';
import { post, send } from './test-utils/http.js';

/** A raw connection that sends a POST's headers (a 100-byte body declared) and one byte of it, then nothing. */
function stalled(url: string): { reply: Promise<string>; close(): void } {
  const u = new URL(url);
  const socket = connect(Number(u.port), u.hostname);
  socket.on('error', () => undefined);
  socket.write('POST /get_reward HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
  let got = '';
  socket.on('data', (d: Buffer) => {
    got += d.toString('latin1');
  });
  return { reply: new Promise((resolve) => socket.on('close', () => resolve(got))), close: () => socket.destroy() };
}

describe('slow request bodies', () => {
  it('twice maxInFlight stalled bodies: /health and a whole request are answered; each stalled one gets 408 and is closed', async () => {
    const server = await RewardServer.start({ port: 0, concurrency: 1, maxInFlight: 4, bodyTimeoutMs: 3_000 });
    const slow = Array.from({ length: 8 }, () => stalled(server.url));
    try {
      await expect.poll(() => server.stats.receiving, { timeout: 60_000 }).toBe(8);
      const health = await send(`${server.url}/health`, 'GET');
      expect([health.status, health.json.status, health.json.stats.inFlight, health.json.stats.receiving]).toEqual([200, 'ok', 0, 8]);
      const cases = makeCases(6);
      const r = await post(`${server.url}/get_reward`, body(cases));
      expect(r.status).toBe(200);
      expect(r.json.rewards).toEqual(cases.map((c) => mathReward(c.completion, c.gold).reward));
      // the reply to each stalled client: a 408 naming the option, then the server closes the connection
      for (const reply of await Promise.all(slow.map((s) => s.reply))) {
        expect(reply).toMatch(/^HTTP\/1\.1 408 /);
        expect(reply).toMatch(/"code":"body_timeout"/);
        expect(reply).toMatch(/within 3000 ms \(1 bytes came of 100; server option bodyTimeoutMs, CLI --body-timeout-ms\)/);
      }
      expect([server.stats.bodyTimeouts, server.stats.receiving, server.stats.overloaded]).toEqual([8, 0, 0]);
    } finally {
      for (const s of slow) s.close();
      await server.close();
    }
  }, 300_000);

  it('past maxReceiving a request is refused before its body (503 overloaded, Retry-After); /health still answers', async () => {
    const server = await RewardServer.start({ port: 0, concurrency: 1, maxReceiving: 2, bodyTimeoutMs: 120_000 });
    const slow = [stalled(server.url), stalled(server.url)];
    try {
      await expect.poll(() => server.stats.receiving, { timeout: 60_000 }).toBe(2);
      const r = await post(`${server.url}/get_reward`, body(makeCases(2)));
      expect([r.status, r.json.error.code, r.headers['retry-after'], r.headers.connection]).toEqual([503, 'overloaded', '1', 'close']);
      expect(r.json.error.message).toMatch(/2 request bodies are being received \(the limit, maxReceiving \/ --max-receiving\)/);
      expect((await send(`${server.url}/health`, 'GET')).status).toBe(200);
      // a stalled client that leaves frees its slot at once
      slow[0]!.close();
      await expect.poll(() => server.stats.receiving, { timeout: 60_000 }).toBe(1);
      const cases = makeCases(3);
      const ok = await post(`${server.url}/get_reward`, body(cases));
      expect(ok.json.rewards).toEqual(cases.map((c) => mathReward(c.completion, c.gold).reward));
    } finally {
      for (const s of slow) s.close();
      await server.close();
    }
  }, 300_000);

  it('/health is answered 200 while every maxInFlight slot is busy grading', async () => {
    const server = await RewardServer.start({ port: 0, concurrency: 1, maxInFlight: 1, timeoutMs: 60_000 });
    try {
      const busy = post(`${server.url}/get_reward`, body([{ prompt: '', completion: SLOWER, gold: '1', expected: 0 }]));
      await expect.poll(() => server.stats.inFlight, { timeout: 60_000 }).toBe(1);
      const health = await send(`${server.url}/health`, 'GET');
      expect([health.status, health.json.stats.inFlight]).toEqual([200, 1]);
      const refused = await post(`${server.url}/get_reward`, body(makeCases(1)));
      expect([refused.status, refused.json.error.code]).toEqual([503, 'overloaded']);
      expect((await busy).status).toBe(200);
    } finally {
      await server.close();
    }
  }, 300_000);
});
