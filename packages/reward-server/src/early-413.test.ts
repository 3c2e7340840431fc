/**
 * A body over the limit gets its 413 at once, and the connection stays open while the rest is read and dropped, so
 * every kind of client reads the 413: one that reads while it sends (Node's http, curl) stops early; one that
 * writes its whole body before it reads (Python's urllib, as in the verl example; here also a raw socket doing the
 * same) finds the 413 waiting instead of a broken pipe.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RewardServer } from './server.js';
import { post } from './test-utils/http.js';

const PY = '/usr/bin/python3';
const MiB = 1024 * 1024;
let server: RewardServer;
beforeAll(async () => {
  server = await RewardServer.start({ port: 0, concurrency: 1, maxBodyBytes: MiB, maxDiscardBytes: 16 * MiB });
});
afterAll(() => server.close());

/** Writes the headers and all `bytes` of body, and only then reads: what comes back is what such a client sees. */
function sendAllThenRead(bytes: number): Promise<{ status?: number; error?: string }> {
  const u = new URL(server.url);
  return new Promise((resolve) => {
    const s = connect(Number(u.port), u.hostname);
    let reply = '';
    let settled = false;
    const done = (r: { status?: number; error?: string }) => {
      if (settled) return;
      settled = true;
      s.destroy();
      resolve(r);
    };
    s.on('error', (e: NodeJS.ErrnoException) => done({ error: e.code ?? e.message }));
    s.on('connect', async () => {
      s.write(`POST /get_reward HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${bytes}\r\n\r\n`);
      const piece = Buffer.alloc(64 * 1024, 0x20);
      for (let sent = 0; sent < bytes && !settled; sent += piece.length) {
        if (!s.write(piece.subarray(0, Math.min(piece.length, bytes - sent)))) await new Promise((r) => s.once('drain', r));
      }
      s.on('data', (c: Buffer) => {
        reply += c.toString('latin1');
        const m = /^HTTP\/1\.1 (\d{3})/.exec(reply);
        if (m) done({ status: Number(m[1]) });
      });
      s.on('end', () => done({ error: 'closed without an answer' }));
    });
  });
}

describe('413 before the body is read', () => {
  it('reaches a client that reads while it sends, before it has sent its body', async () => {
    const u = new URL(server.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path: '/get_reward',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': String(8 * MiB) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
          req.destroy();
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
      // one chunk, then nothing more until the answer: only a server that answers from Content-Length can reply
      req.write(Buffer.alloc(64 * 1024, 0x20));
    });
    expect(status).toBe(413);
  });

  it('reaches a client that writes a whole 3 MB body before reading (a raw socket, as urllib does)', async () => {
    expect(await sendAllThenRead(3 * MiB)).toEqual({ status: 413 });
    expect(await sendAllThenRead(12 * MiB)).toEqual({ status: 413 });
  });

  it('past maxBodyBytes + maxDiscardBytes the connection is cut, and the server carries on', async () => {
    const r = await sendAllThenRead(40 * MiB);
    expect(r.error ?? `status ${r.status}`).toMatch(/EPIPE|ECONNRESET|closed without an answer|status 413/);
    const ok = await post(`${server.url}/get_reward`, { query: ['\\boxed{2}'], labels: ['2'] });
    expect(ok.json.rewards).toEqual([1]);
  });

  it.skipIf(!existsSync(PY))('reaches Python urllib (it sends the whole body, then reads): HTTPError 413, not BrokenPipe', async () => {
    const code = `import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], data=b" " * int(sys.argv[2]), headers={"Content-Type": "application/json"})
try:
    urllib.request.urlopen(req, timeout=60)
    print("no error")
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode()[:200])
except Exception as e:
    print(type(e).__name__, e)`;
    for (const bytes of [3 * MiB, 12 * MiB]) {
      const out = await new Promise<string>((resolve) => {
        const child = spawn(PY, ['-c', code, `${server.url}/get_reward`, String(bytes)], { stdio: ['ignore', 'pipe', 'pipe'] });
        let text = '';
        child.stdout.on('data', (c) => (text += c));
        child.stderr.on('data', (c) => (text += c));
        child.on('close', () => resolve(text.trim()));
      });
      expect(out).toMatch(
        /^413 \{"error":\{"code":"body_too_large","message":"request body is \d+ bytes, more than the limit of 1048576 bytes/,
      );
    }
  });
});
