/** `drainAndClose` on a real `node:http` server on loopback, with clients in another process. */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { drainAndClose } from './http-drain.js';

/** A server that answers 200 after `delayMs` (never for null), and 503 once draining; counts its handlers. */
function testServer(delayMs: number | null = 0) {
  let draining = false;
  let busy = 0;
  const waiters: (() => void)[] = [];
  const server: Server = createServer((_req, res) => {
    if (draining) {
      res.writeHead(503, { connection: 'close' }).end('draining');
      return;
    }
    busy++;
    if (delayMs === null) return;
    setTimeout(() => {
      res.writeHead(200).end('ok');
      busy--;
      if (busy === 0) for (const w of waiters.splice(0)) w();
    }, delayMs);
  });
  const drain = (timeoutMs?: number) => {
    draining = true;
    return drainAndClose(server, {
      busy: () => busy,
      idle: () => new Promise<void>((resolve) => waiters.push(resolve)),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
  };
  const listening = new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
  return { server, drain, listening, busy: () => busy };
}

/** One GET on a fresh connection: the status, or the error code. */
function get(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end();
  });
}

describe('drainAndClose', () => {
  it('answers the requests waiting in the accept queue (503 each, no reset) and then stops listening', async () => {
    const t = testServer();
    const url = await t.listening;
    const dir = mkdtempSync(join(tmpdir(), 'rlvr-drain-'));
    try {
      // a client process sends 8 requests while this thread is blocked: they wait in the kernel's accept queue
      const marker = join(dir, 'sent');
      const client = [
        "import { request } from 'node:http';",
        "import { writeFileSync } from 'node:fs';",
        'const [url, marker] = process.argv.slice(1);',
        'let sent = 0;',
        'const one = () => new Promise((resolve) => {',
        '  const req = request(url, { agent: false }, (res) => { res.resume(); res.on("end", () => resolve(res.statusCode)); });',
        '  req.on("error", (e) => resolve(e.code ?? e.message));',
        '  req.end(() => { if (++sent === 8) writeFileSync(marker, ""); });',
        '});',
        'console.log(JSON.stringify(await Promise.all(Array.from({ length: 8 }, one))));',
      ].join('\n');
      const child = spawn(process.execPath, ['--input-type=module', '-e', client, url, marker], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c;
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const until = Date.now() + 120_000;
      while (!existsSync(marker)) if (Date.now() > until) throw new Error('the client did not send its requests in 120 s');
      expect(await t.drain()).toEqual({ timedOut: false, cut: 0 });
      expect(await exited).toBe(0);
      expect(JSON.parse(out)).toEqual(Array.from({ length: 8 }, () => 503));
      expect(t.server.listening).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it('lets a request in flight finish; past timeoutMs it cuts what is still running', async () => {
    const t = testServer(300);
    const url = await t.listening;
    const first = get(url);
    await expect.poll(() => t.busy(), { timeout: 60_000 }).toBe(1);
    expect(await Promise.all([first, t.drain()])).toEqual([200, { timedOut: false, cut: 0 }]);

    const hanging = testServer(null);
    const hung = get(await hanging.listening);
    await expect.poll(() => hanging.busy(), { timeout: 60_000 }).toBe(1);
    expect(await hanging.drain(100)).toEqual({ timedOut: true, cut: 1 });
    expect(await hung).toBe('ECONNRESET');
    expect(hanging.server.listening).toBe(false);
  }, 300_000);
});
