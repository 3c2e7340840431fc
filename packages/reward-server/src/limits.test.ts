/**
 * Bounded work on `POST /advantages`: limits on tokens per row and per request, checked before anything is
 * allocated (the 130-byte body of issue 19 asked for 4e8 tokens and held the event loop for 106 s), and the work
 * itself in worker threads, so `/health` is answered while a large batch is estimated; a worker heap too small
 * for the limit is refused at startup.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RewardServer } from './server.js';
import { post, send } from './test-utils/http.js';

let server: RewardServer;
beforeAll(async () => {
  server = await RewardServer.start({ port: 0, concurrency: 1 });
});
afterAll(() => server.close());

describe('POST /advantages work is bounded by the request', () => {
  it('the 130-byte request asking for 2 x 2e8 tokens is a 413 naming the limit and the field, at once', async () => {
    const body = '[{"group":0,"reward":1,"length":200000000},{"group":0,"reward":0,"length":200000000}]';
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(130);
    const r = await post(`${server.url}/advantages?estimator=grpo`, body);
    expect(r.status).toBe(413);
    expect(r.json.error).toEqual({
      code: 'too_many_tokens',
      message:
        'item 0, field length: row 0 has length 200000000, more than the limit of 1048576 tokens per row (server option maxRowTokens, CLI --max-row-tokens)',
      index: 0,
      field: 'length',
    });
    const h = await send(`${server.url}/health`, 'GET');
    expect([h.status, h.json.stats.serverErrors]).toEqual([200, 0]);
  });

  it('length 2^31 is a 400 naming the field, not a 500 or a RangeError', async () => {
    const r = await post(`${server.url}/advantages?estimator=grpo`, [{ group: 0, reward: 1, length: 2 ** 31 }]);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_request');
    expect(r.json.error.message).toMatch(/row 0: length: .*<=2147483647/);
    expect([r.json.error.index, r.json.error.field]).toEqual([0, 'length']);
  });

  it('rows under the row limit that add up past the request limit are a 413 on rows; a JSONL row over the row limit names its line', async () => {
    const rows = Array.from({ length: 5 }, (_, i) => ({ group: 0, reward: i % 2, length: 1_000_000 }));
    const r = await post(`${server.url}/advantages?estimator=grpo`, rows);
    expect(r.status).toBe(413);
    expect(r.json.error.field).toBe('rows');
    expect(r.json.error.message).toMatch(
      /the rows hold 5000000 completion tokens, more than the limit of 4194304 per request \(server option maxAdvantageTokens, CLI --max-advantage-tokens\)/,
    );
    const jsonl = `{"group":0,"reward":1,"length":3}\n\n{"group":0,"reward":0,"length":2000000}\n`;
    const l = await post(`${server.url}/advantages?estimator=grpo`, jsonl);
    expect([l.status, l.json.error.line, l.json.error.index, l.json.error.field]).toEqual([413, 3, 1, 'length']);
  });

  it('the limits are options', async () => {
    const tight = await RewardServer.start({ port: 0, concurrency: 1, maxRowTokens: 4, maxAdvantageTokens: 6 });
    try {
      const ok = await post(`${tight.url}/advantages?estimator=grpo`, [
        { group: 0, reward: 1, length: 4 },
        { group: 0, reward: 0, length: 2 },
      ]);
      expect(ok.status).toBe(200);
      const row = await post(`${tight.url}/advantages?estimator=grpo`, [{ group: 0, reward: 1, length: 5 }]);
      expect([row.status, row.json.error.message]).toEqual([413, expect.stringMatching(/limit of 4 tokens per row/)]);
      const total = await post(`${tight.url}/advantages?estimator=grpo`, [
        { group: 0, reward: 1, length: 4 },
        { group: 0, reward: 0, length: 3 },
      ]);
      expect([total.status, total.json.error.message]).toEqual([
        413,
        expect.stringMatching(/7 completion tokens, more than the limit of 6/),
      ]);
      expect((await send(`${tight.url}/health`, 'GET')).json).toMatchObject({ maxAdvantageTokens: 6, maxRowTokens: 4 });
    } finally {
      await tight.close();
    }
  });

  it('/health is answered while a batch at the limit (4 x 2^20 tokens) is estimated', async () => {
    const rows = [0, 1, 0, 1].map((reward) => ({ group: 'g', reward, length: 1 << 20 }));
    const big = post(`${server.url}/advantages?estimator=grpo&weights=1`, rows);
    // A /health answer that counts the batch as in flight was written while the batch was being worked on: with the
    // estimation on the event loop, /health could only be answered after it (then inFlight would be 0).
    await expect
      .poll(async () => (await send(`${server.url}/health`, 'GET')).json.stats.inFlight, { timeout: 60_000, interval: 5 })
      .toBe(1);
    const r = await big;
    expect(r.status).toBe(200);
    // rewards 0, 1, 0, 1: mean 0.5, Bessel std sqrt(1/3)
    const a = Math.fround(0.5 / (Math.sqrt(1 / 3) + 1e-6));
    const rowsOut = r.json.advantages as number[][];
    expect(rowsOut.map((row) => row.length)).toEqual([1 << 20, 1 << 20, 1 << 20, 1 << 20]);
    expect([rowsOut[0]![0], rowsOut[1]![(1 << 20) - 1], rowsOut[2]![12345], rowsOut[3]![0]].map(Math.fround)).toEqual([-a, a, -a, a]);
    expect((r.json.weights as number[][])[2]!.every((w) => w === 1)).toBe(true);
  });

  it('refuses a worker heap too small for the token limit at startup, naming both', async () => {
    await expect(RewardServer.start({ port: 0, workerMemoryMb: 32, maxAdvantageTokens: 1 << 24 })).rejects.toThrow(
      /workerMemoryMb: must be at least 1536 MiB for maxAdvantageTokens 16777216 \(96 bytes a token\)/,
    );
    await expect(
      RewardServer.start({ port: 0, workerMemoryMb: 32, maxAdvantageTokens: 1 << 18, concurrency: 1 }).then((s) => s.close()),
    ).resolves.toBeUndefined();
  });
});
