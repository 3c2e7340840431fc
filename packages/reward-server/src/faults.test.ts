/**
 * Faults over real sockets: a client that disconnects mid-request, a 10 MB request, a body that is not JSON,
 * 1,000 requests in a burst, pathological answers. After each, the server answers the next request correctly.
 */
import { connect } from 'node:net';
import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mathReward } from '@rlvr/math-verify';
import { RewardServer } from './server.js';
import { SLOWER, body, makeCases } from './test-utils/cases.js';
import { bounded, post, send } from './test-utils/http.js';

let server: RewardServer;
let url: string;
const probe = makeCases(24);
const probeWant = probe.map((c) => mathReward(c.completion, c.gold).reward);

/** The check after every fault: a normal batch gets the right rewards. */
async function answersCorrectly(): Promise<void> {
  const r = await post(`${url}/get_reward`, body(probe));
  expect(r.status).toBe(200);
  expect(r.json.rewards).toEqual(probeWant);
}

/** Opens a raw connection, sends `head` and part of a body, then resets it. Resolves once the socket is gone. */
function disconnectMidBody(head: string, partial: string, to = url): Promise<void> {
  const u = new URL(to);
  return new Promise((resolve) => {
    const s = connect(Number(u.port), u.hostname, () => {
      s.write(head + partial, () => setTimeout(() => s.resetAndDestroy(), 50));
    });
    s.on('close', () => resolve());
    s.on('error', () => {});
  });
}

beforeAll(async () => {
  server = await RewardServer.start({
    port: 0,
    concurrency: 2,
    timeoutMs: 800,
    maxBodyBytes: 1024 * 1024,
    maxDiscardBytes: 16 * 1024 * 1024,
  });
  url = server.url;
});
afterAll(() => server.close());

describe('faults', () => {
  it('a client that disconnects in the middle of its body', async () => {
    const payload = JSON.stringify(body(makeCases(50)));
    const head = `POST /get_reward HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`;
    await disconnectMidBody(head, payload.slice(0, payload.length / 2));
    await answersCorrectly();
    await expect.poll(() => server.stats.clientsGone).toBeGreaterThanOrEqual(1);
  });

  it('a client that disconnects while its batch is being graded: the batch is cancelled, a later request does not wait for it', async () => {
    // one verifier worker and 20 slow items (each runs into the 800 ms budget): 16 s of grading if it all ran
    const own = await RewardServer.start({ port: 0, concurrency: 1, timeoutMs: 800 });
    try {
      const cases = makeCases(20).map((c) => ({ ...c, completion: `so ${SLOWER}`, gold: '1' }));
      const payload = JSON.stringify(body(cases));
      const head = `POST /get_reward HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n`;
      await disconnectMidBody(head, payload, own.url);
      await expect.poll(() => own.stats.clientsGone, { timeout: 120_000 }).toBe(1);
      const r = await post(`${own.url}/get_reward`, body(probe));
      expect(r.json.rewards).toEqual(probeWant);
      // the abandoned items left the queue: at most the one a worker had started ran on
      const pool = (await send(`${own.url}/health`, 'GET')).json.pool;
      expect(pool.cancelled).toBe(20);
      expect(pool.timedOut).toBeLessThanOrEqual(1);
      expect(own.stats.inFlight).toBe(0);
    } finally {
      await own.close();
    }
  });

  it('a 10 MB request over the limit is answered 413 without being stored, with and without Content-Length', async () => {
    const big = JSON.stringify({ query: ['x'.repeat(10 * 1024 * 1024)], prompts: [''], labels: ['1'] });
    const r = await post(`${url}/get_reward`, big);
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('body_too_large');
    expect(r.json.error.message).toMatch(/limit of 1048576 bytes/);
    await answersCorrectly();
    // chunked: no declared length, the limit trips while reading
    const chunked = await post(`${url}/get_reward`, big, { headers: { 'transfer-encoding': 'chunked' } });
    expect(chunked.status).toBe(413);
    await answersCorrectly();
    // Expect: 100-continue: refused before the body is sent
    const cont = await post(`${url}/get_reward`, big, { headers: { expect: '100-continue' } }).catch((e: Error) => e);
    if (!(cont instanceof Error)) expect(cont.status).toBe(413);
    await answersCorrectly();
  });

  it('a 10 MB request under a larger limit is graded (the answer at its end is read)', async () => {
    const roomy = await RewardServer.start({ port: 0, concurrency: 1, maxBodyBytes: 32 * 1024 * 1024 });
    try {
      const long = 'think '.repeat(165_000) + '\\boxed{42}'; // 990 kB each (under the verifier's 1M-char limit), 11 of them
      const cases = Array.from({ length: 11 }, (_, i) => ({ q: long, label: i % 2 === 0 ? '42' : '41' }));
      const payload = JSON.stringify({ query: cases.map((c) => c.q), prompts: cases.map(() => ''), labels: cases.map((c) => c.label) });
      expect(payload.length).toBeGreaterThan(10 * 1024 * 1024);
      const r = await post(`${roomy.url}/get_reward`, payload);
      expect(r.status).toBe(200);
      expect(r.json.rewards).toEqual(cases.map((c) => mathReward(c.q, c.label).reward));
      expect(r.json.rewards).toEqual([1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
    } finally {
      await roomy.close();
    }
  });

  it('a body that is not JSON (binary noise, text, invalid UTF-8)', async () => {
    for (const junk of [Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80, 0x7b]), 'query=a&labels=b', Buffer.from('{"query": ["\xff"]')]) {
      const r = await post(`${url}/get_reward`, junk, { headers: { 'content-type': 'application/octet-stream' } });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('invalid_json');
      await answersCorrectly();
    }
  });

  it('deeply nested JSON (400,000 levels) is a 400 on both routes', async () => {
    const deep = '['.repeat(400_000) + ']'.repeat(400_000);
    for (const [path, payload] of [
      ['/get_reward', deep],
      ['/get_reward', `{"query": ${deep}, "labels": []}`],
      ['/advantages', deep],
      ['/advantages', `{"rows": [{"group": 1, "reward": 1, "length": 0}], "estimator": "grpo", "options": {"bessel": ${deep}}}`],
    ] as const) {
      const r = await post(`${url}${path}`, payload);
      expect([path, r.status]).toEqual([path, 400]);
      expect(r.json.error.message.length).toBeLessThan(2000);
    }
    await answersCorrectly();
  });

  it('a malformed HTTP request gets a 400 and the server stays up', async () => {
    const u = new URL(url);
    const reply = await new Promise<string>((resolve) => {
      const s = connect(Number(u.port), u.hostname, () => s.write('NOT HTTP AT ALL\r\n\r\n'));
      let text = '';
      s.on('data', (c) => (text += c.toString()));
      s.on('close', () => resolve(text));
      s.on('error', () => resolve(text));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    await answersCorrectly();
    // a request target that is not a URL
    const bad = await new Promise<string>((resolve) => {
      const s = connect(Number(u.port), u.hostname, () =>
        s.write('GET http://[oops/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
      );
      let text = '';
      s.on('data', (c) => (text += c.toString()));
      s.on('close', () => resolve(text));
      s.on('error', () => resolve(text));
    });
    expect(bad).toMatch(/^HTTP\/1\.1 400/);
    await answersCorrectly();
  });

  it('1,000 requests in a burst (50 in flight): every one answered, in order', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    try {
      const replies = await bounded(1000, 50, async (i) => {
        const cases = makeCases(4 + (i % 5)).map((c, k) => ({ ...c, completion: `\\boxed{${i + k}}`, gold: String(i + k + (k % 2)) }));
        const r = await post(`${url}/get_reward`, body(cases), { agent });
        return { r, want: cases.map((_c, k) => (k % 2 === 0 ? 1 : 0)) };
      });
      for (const { r, want } of replies) {
        expect(r.status).toBe(200);
        expect(r.json.rewards).toEqual(want);
      }
    } finally {
      agent.destroy();
    }
    await answersCorrectly();
  }, 300_000);

  it('pathological answers time out without stalling the rest of the batch', async () => {
    // 3 slow items (seconds each in-process) among 57 quick ones (about a millisecond each); budget 800 ms
    const cases = makeCases(60, 20, SLOWER);
    const r = await post(`${url}/get_reward?details=1`, body(cases));
    expect(r.status).toBe(200);
    cases.forEach((c, i) => {
      const slow = c.completion.includes(SLOWER);
      expect([i, r.json.extra_logs.timeout[i], r.json.reasons[i] === 'timeout']).toEqual([i, slow ? 1 : 0, slow]);
      // a slow item's in-process verdict is 0 too ("value too large to compare"), after seconds
      expect([i, r.json.rewards[i]]).toEqual([i, slow ? 0 : mathReward(c.completion, c.gold).reward]);
    });
    await answersCorrectly();
  }, 300_000);

  it('past maxInFlight: 503 overloaded with Retry-After, and the requests in flight are unaffected', async () => {
    const small = await RewardServer.start({ port: 0, concurrency: 1, timeoutMs: 800, maxInFlight: 2 });
    try {
      const slow = makeCases(4, 2, SLOWER); // two slow items: over a second of grading
      const busy = [post(`${small.url}/get_reward`, body(slow)), post(`${small.url}/get_reward`, body(slow))];
      await expect.poll(() => small.stats.inFlight).toBe(2);
      const r = await post(`${small.url}/get_reward`, body(probe));
      expect([r.status, r.json.error.code, r.headers['retry-after']]).toEqual([503, 'overloaded', '1']);
      // The slow items' reward is 0 whether they time out or finish in time (their verdict is
      // 0 as well), so this holds on a fast machine too; the others are graded normally.
      const want = slow.map((c) => (c.completion.includes(SLOWER) ? 0 : mathReward(c.completion, c.gold).reward));
      for (const b of await Promise.all(busy)) {
        expect(b.status).toBe(200);
        expect(b.json.rewards).toEqual(want);
      }
      const again = await post(`${small.url}/get_reward`, body(probe));
      expect(again.json.rewards).toEqual(probeWant);
      expect(small.stats.overloaded).toBe(1);
      expect(small.stats.serverErrors).toBe(0);
    } finally {
      await small.close();
    }
  }, 300_000);

  it('counts no server error through all of this', async () => {
    const h = await send(`${url}/health`, 'GET');
    expect(h.json.stats.serverErrors).toBe(0);
    expect(h.json.status).toBe('ok');
  });
});
