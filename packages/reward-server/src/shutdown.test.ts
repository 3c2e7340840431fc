/**
 * Graceful shutdown with real requests in flight: `close()` lets them finish, refuses new connections, and cuts
 * only what outlives `shutdownTimeoutMs`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mathReward } from '@rlvr/math-verify';
import { RewardServer } from './server.js';
import { SLOW, SLOWER, body, makeCases } from './test-utils/cases.js';
import { post, send } from './test-utils/http.js';

/** A batch whose grading takes over a second: one slow item (no timeout hit with the default 5 s) among quick ones. */
function slowBatch() {
  const cases = makeCases(12);
  cases[5] = { ...cases[5]!, completion: `so ${SLOW}`, gold: '1' };
  return cases;
}

describe('graceful shutdown', () => {
  it('finishes the request in flight, answers it correctly, then refuses new connections', async () => {
    const server = await RewardServer.start({ port: 0, concurrency: 1 });
    const url = server.url;
    const cases = slowBatch();
    const inFlight = post(`${url}/get_reward`, body(cases));
    await expect.poll(() => server.stats.inFlight).toBe(1);
    await new Promise((r) => setTimeout(r, 100)); // the body is read and the batch is on the pool
    const closed = server.close();
    expect(server.close()).toBe(closed); // idempotent
    const r = await inFlight;
    expect(r.status).toBe(200);
    expect(r.headers.connection).toBe('close');
    expect(r.json.rewards).toEqual(cases.map((c) => mathReward(c.completion, c.gold).reward));
    expect(r.json.extra_logs.timeout).toEqual(cases.map(() => 0));
    await closed;
    await expect(send(`${url}/health`, 'GET')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  }, 300_000);

  it('answers 503 to a new request on an open keep-alive connection while draining', async () => {
    const server = await RewardServer.start({ port: 0, concurrency: 1 });
    const url = server.url;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await send(`${url}/health`, 'GET', undefined, { agent })).status).toBe(200);
      const other = post(`${url}/get_reward`, body(slowBatch())); // keeps the server draining for a while
      await expect.poll(() => server.stats.inFlight).toBe(1);
      await new Promise((r) => setTimeout(r, 100));
      const closed = server.close();
      // The keep-alive socket was idle, so close() ended it; a fresh one is refused. Either way nothing hangs.
      const late = await send(`${url}/get_reward`, 'POST', JSON.stringify(body(makeCases(2))), { agent }).catch(
        (e: NodeJS.ErrnoException) => e,
      );
      if (late instanceof Error) expect(['ECONNREFUSED', 'ECONNRESET']).toContain(late.code);
      else expect([late.status, late.json.error.code]).toEqual([503, 'shutting_down']);
      expect((await other).status).toBe(200);
      await closed;
    } finally {
      agent.destroy();
    }
  }, 300_000);

  it('answers the connections waiting in the accept queue when close() is called: a 503 each, never a reset', async () => {
    // A client process connects and sends 8 requests while this thread (the server's) is blocked, so they sit in
    // the kernel's accept queue, and close() is called before the event loop gets to them: closing the listener
    // then would reset them. With nothing in flight, close() must still let them in and answer them.
    const server = await RewardServer.start({ port: 0, concurrency: 1 });
    const dir = mkdtempSync(join(tmpdir(), 'rlvr-accept-queue-'));
    try {
      const marker = join(dir, 'sent');
      const client = [
        "import { request } from 'node:http';",
        "import { writeFileSync } from 'node:fs';",
        'const [url, marker] = process.argv.slice(1);',
        'let sent = 0;',
        'const body = JSON.stringify({ query: ["so \\\\boxed{1}"], labels: ["1"] });',
        'const one = () => new Promise((resolve) => {',
        "  const req = request(url + '/get_reward', { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {",
        "    res.resume(); res.on('end', () => resolve(res.statusCode)); res.on('error', (e) => resolve(e.code));",
        '  });',
        "  req.on('error', (e) => resolve(e.code ?? e.message));",
        "  req.end(body, () => { if (++sent === 8) writeFileSync(marker, ''); });",
        '});',
        'console.log(JSON.stringify(await Promise.all(Array.from({ length: 8 }, one))));',
      ].join('\n');
      const child = spawn(process.execPath, ['--input-type=module', '-e', client, server.url, marker], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c;
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const until = Date.now() + 120_000;
      while (!existsSync(marker)) if (Date.now() > until) throw new Error('the client did not send its requests in 120 s');
      expect(server.stats.requests).toBe(0);
      await server.close();
      expect(await exited).toBe(0);
      expect(JSON.parse(out)).toEqual(Array.from({ length: 8 }, () => 503));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it('cuts a request that outlives shutdownTimeoutMs and still stops', async () => {
    const server = await RewardServer.start({ port: 0, concurrency: 1, timeoutMs: 60_000, shutdownTimeoutMs: 100 });
    const cases = makeCases(3).map((c) => ({ ...c, completion: SLOWER, gold: '1' })); // several seconds of work
    const inFlight = post(`${server.url}/get_reward`, body(cases)).catch((e: Error) => e);
    await expect.poll(() => server.stats.inFlight).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    await server.close(); // resolves although the request would grade for seconds more (the test timeout guards a hang)
    const r = await inFlight;
    expect(r).toBeInstanceOf(Error);
  }, 300_000);
});
