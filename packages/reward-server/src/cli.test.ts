/** `rlvr-reward-server` as a child process (the built `dist/cli.js`): serve, SIGTERM with a request in flight, bad arguments. */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { mathReward } from '@rlvr/math-verify';
import { SLOWER, body, makeCases } from './test-utils/cases.js';
import { post, send } from './test-utils/http.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The bin's name, as npm links it (package.json's `bin`). */
const BIN_NAME = Object.keys(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).bin)[0]!;

/** The processes below `pid` (Linux's /proc; empty elsewhere): to clean up what a failed test leaves running. */
function descendants(pid: number): number[] {
  const file = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(file)) return [];
  const kids = readFileSync(file, 'utf8').split(' ').filter(Boolean).map(Number);
  return kids.flatMap((k) => [k, ...descendants(k)]);
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts the CLI and resolves with its URL once it prints the listening line. */
function startCli(args: string[]): Promise<{ child: ChildProcess; url: string; stderr: () => string; exit: Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c) => (err += c));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ child, url: m[1]!, stderr: () => err, exit });
    });
    void exit.then((code) => reject(new Error(`CLI exited with ${code} before listening: ${err}`)));
  });
}

describe('rlvr-reward-server CLI', () => {
  it('serves /get_reward on loopback and drains a request in flight on SIGTERM, exiting 0', async () => {
    const { child, url, stderr, exit } = await startCli(['--port', '0', '--concurrency', '1', '--timeout-ms', '4000']);
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const cases = makeCases(30);
      const r = await post(`${url}/get_reward`, body(cases));
      expect(r.json.rewards).toEqual(cases.map((c) => mathReward(c.completion, c.gold).reward));
      const slow = [...makeCases(4), { prompt: '', completion: SLOWER, gold: '1', expected: 0 as const }];
      const inFlight = post(`${url}/get_reward`, body(slow));
      await expect.poll(async () => (await send(`${url}/health`, 'GET')).json.stats.inFlight).toBe(1); // the slow one (/health is never counted)
      child.kill('SIGTERM');
      const done = await inFlight;
      expect(done.status).toBe(200);
      expect(done.json.rewards).toEqual(slow.map((c) => mathReward(c.completion, c.gold).reward));
      expect(await exit).toBe(0);
      expect(stderr()).toMatch(/interrupted: draining 1 request\(s\) in flight/);
      expect(stderr()).toMatch(/stopped/);
    } finally {
      child.kill('SIGKILL');
    }
  }, 300_000);

  it.each([
    [['--port', 'abc'], /--port: must be an integer/],
    [['--timeout-ms', '0'], /timeoutMs/],
    [['--verify', '{"percent": "sometimes"}'], /verify\.percent/],
    [['--verify', 'not json'], /--verify: must be a JSON object/],
    [['--max-advantage-tokens', '0'], /maxAdvantageTokens: .*>=1/],
    [['--on-prompt-mismatch', 'ignore'], /onPromptMismatch: must be one of "whole_query", "zero"/],
    [['--bogus'], /Unknown option '--bogus'$/],
    [['--prot', '1'], /Unknown option '--prot' \(did you mean --port\?\)$/],
  ])('%j exits 2 with a message, then one line naming --help', (args, message) => {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(2);
    const lines = r.stderr.split('\n');
    expect(lines[0]).toMatch(message);
    expect(lines.slice(1)).toEqual(['(rlvr-reward-server --help lists the options)', '']);
  });

  it('exits 1 when the port is taken', async () => {
    const { child, url, exit } = await startCli(['--port', '0', '--concurrency', '1']);
    try {
      const r = spawnSync(process.execPath, [CLI, '--port', new URL(url).port, '--concurrency', '1'], {
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
    } finally {
      child.kill('SIGINT');
      expect(await exit).toBe(0);
    }
  }, 300_000);

  it('examples/usage.mjs (the README example) runs and prints reward 1', async () => {
    const example = fileURLToPath(new URL('../examples/usage.mjs', import.meta.url));
    // FORCE_COLOR (set by test runners and CI) would make console.log colour the numbers
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env.FORCE_COLOR;
    const child = spawn(process.execPath, [example], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    child.stdout!.on('data', (c) => (out += c));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(out).toMatch(/rewards: \[ 1 \]/);
  }, 300_000);

  it('started with `npx ... &`, stops when npx gets SIGTERM (`kill $!`): its port is released', async () => {
    // npm runs the bin as npm -> sh -> node and passes SIGTERM to the shell only, which dies without passing it on:
    // the node process used to be re-parented and serve on (issue 42).
    const npx = spawn('npx', ['--no', '--', BIN_NAME, '--port', '0', '--concurrency', '1'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    npx.stdout!.on('data', (c) => (out += c));
    npx.stderr!.on('data', (c) => (err += c));
    const npxExit = new Promise((resolve) => npx.once('exit', resolve));
    let below: number[] = [];
    try {
      await expect.poll(() => /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out), { timeout: 120_000, interval: 50 }).not.toBeNull();
      const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]);
      below = descendants(npx.pid!);
      expect(await listening(port)).toBe(true);
      npx.kill('SIGTERM');
      await npxExit;
      await expect.poll(() => listening(port), { timeout: 60_000, interval: 100 }).toBe(false);
      // and the server said why it stopped: the drain of a SIGTERM
      await expect.poll(() => err, { timeout: 60_000 }).toMatch(/stopped/);
    } finally {
      npx.kill('SIGKILL');
      for (const pid of below) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
    }
  }, 300_000);

  it('a second signal while draining exits 130 at once', async () => {
    const { child, url, exit } = await startCli([
      '--port',
      '0',
      '--concurrency',
      '1',
      '--timeout-ms',
      '60000',
      '--shutdown-timeout-ms',
      '60000',
    ]);
    try {
      const slow = [{ prompt: '', completion: SLOWER, gold: '1', expected: 0 as const }];
      void post(`${url}/get_reward`, body(slow)).catch(() => undefined);
      await expect.poll(async () => (await send(`${url}/health`, 'GET')).json.stats.inFlight).toBe(1);
      child.kill('SIGTERM');
      // draining: /health says so (503) while the request in flight runs
      await expect.poll(async () => (await send(`${url}/health`, 'GET')).status).toBe(503);
      child.kill('SIGTERM');
      expect(await exit).toBe(130);
    } finally {
      child.kill('SIGKILL');
    }
  }, 300_000);

  it('is a Command the rlvr CLI composes: the same code in process', async () => {
    const { rewardServerCommand } = await import('./command.js');
    const { runCommands } = await import('@rlvr/core');
    let stdout = '';
    const io = { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => true } };
    const stop = new AbortController();
    const running = runCommands(
      'rlvr',
      { 'reward-server': rewardServerCommand },
      ['reward-server', '--port', '0', '--concurrency', '1'],
      io,
      stop.signal,
    );
    await expect.poll(() => stdout).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
    const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)![1]!;
    expect((await post(`${url}/get_reward`, { query: ['\\boxed{2}'], labels: ['2'] })).json.rewards).toEqual([1]);
    stop.abort();
    expect(await running).toBe(0);
    expect(stdout).toMatch(/^rlvr reward-server: listening on/);
  }, 300_000);

  it('--help prints the options and exits 0', () => {
    const r = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/--max-body-bytes N/);
  });
});
