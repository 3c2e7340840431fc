import { spawn } from 'node:child_process';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  intFlag,
  numberFlag,
  choiceFlag,
  workersFlag,
  runCommand,
  runCommands,
  schemaUsageError,
  useColor,
  type Command,
  type CliIo,
} from './cli.js';
import { CoreError } from './errors.js';

function buffers(): CliIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: {},
    out: () => out,
    err: () => err,
  };
}

const echo: Command = {
  summary: 'prints its count',
  usage: 'usage: t echo --count N',
  options: { count: { type: 'string' } },
  async run({ values, io }) {
    const n = intFlag(values, 'count', { min: 1, max: 10 });
    if (n === 5) throw new CoreError('read_failed', 'not JSON', { file: 'x.jsonl', line: 2 });
    if (n === 6) throw new Error('oops');
    io.stdout.write(`${n}\n`);
  },
};

describe('runCommand', () => {
  it('runs, and gives usage on -h', async () => {
    const io = buffers();
    expect(await runCommand('t echo', echo, ['--count', '3'], io)).toBe(0);
    expect(io.out()).toBe('3\n');
    const h = buffers();
    expect(await runCommand('t echo', echo, ['-h'], h)).toBe(0);
    expect(h.out()).toBe('usage: t echo --count N\n');
  });

  it('exits 2 naming the flag (and the nearest one for a typo) for unknown flags and out-of-range values, then a line naming --help', async () => {
    const a = buffers();
    expect(await runCommand('t echo', echo, ['--cuont', '3'], a)).toBe(2);
    expect(a.err()).toBe("t echo: Unknown option '--cuont' (did you mean --count?)\n(t echo --help lists the options)\n");
    const b = buffers();
    expect(await runCommand('t echo', echo, ['--count', '0'], b)).toBe(2);
    expect(b.err()).toBe('t echo: --count: must be an integer from 1 to 10 (got "0")\n(t echo --help lists the options)\n');
    // nothing near: no suggestion
    const c = buffers();
    expect(await runCommand('t echo', echo, ['--verbose'], c)).toBe(2);
    expect(c.err()).toBe("t echo: Unknown option '--verbose'\n(t echo --help lists the options)\n");
  });

  it('prints a typed error as one line (exit 1), and an unexpected one without a stack', async () => {
    const a = buffers();
    expect(await runCommand('t echo', echo, ['--count', '5'], a)).toBe(1);
    expect(a.err()).toBe('t echo: x.jsonl:2: not JSON\n');
    const b = buffers();
    expect(await runCommand('t echo', echo, ['--count', '6'], b)).toBe(1);
    expect(b.err()).toBe('t echo: internal error: oops (RLVR_DEBUG=1 prints the stack)\n');
  });

  it('lists commands, and refuses an unknown one', async () => {
    const a = buffers();
    expect(await runCommands('t', { echo }, ['-h'], a)).toBe(0);
    expect(a.out()).toContain('  echo         prints its count');
    const b = buffers();
    expect(await runCommands('t', { echo }, ['ehco'], b)).toBe(2);
    expect(b.err()).toBe('t: unknown command "ehco" (did you mean echo?); known: echo\n');
    const c = buffers();
    expect(await runCommands('t', { echo }, ['__proto__'], c)).toBe(2);
  });
});

describe('flag helpers', () => {
  it('parse numbers and choices or name the flag', () => {
    expect(numberFlag({ lr: '1e-5' }, 'lr', { min: 0 })).toBe(1e-5);
    expect(numberFlag({}, 'lr')).toBeUndefined();
    expect(() => numberFlag({ lr: 'fast' }, 'lr', { min: 0 })).toThrow('--lr: must be a number >= 0 (got "fast")');
    expect(() => intFlag({ n: '1.5' }, 'n')).toThrow('--n: must be an integer (got "1.5")');
    expect(choiceFlag({ m: 'last' }, 'm', ['first', 'last'])).toBe('last');
    expect(() => choiceFlag({ m: 'mid' }, 'm', ['first', 'last'])).toThrow('--m: must be one of first, last (got "mid")');
  });

  it('parse --workers: auto, 1 .. 256, or a usage error naming the flag', () => {
    expect(workersFlag({})).toBeUndefined();
    expect(workersFlag({ workers: 'auto' })).toBe('auto');
    expect(workersFlag({ workers: '1' })).toBe(1);
    expect(workersFlag({ workers: '256' })).toBe(256);
    for (const bad of ['0', '257', '2.5', '-1', '', ' 2', 'two', '1e1'])
      expect(() => workersFlag({ workers: bad })).toThrow(
        `--workers: must be auto or an integer from 1 to 256 (got ${JSON.stringify(bad)})`,
      );
  });

  it('name schema issues by their flags, with the values given', () => {
    const schema = z.object({ n: z.number().int().min(1), topP: z.number().max(1), mode: z.enum(['a', 'b']) }).strict();
    const input = { n: 0, topP: 1.5, mode: 'c', extra: 1 };
    const r = schema.safeParse(input);
    expect(r.success).toBe(false);
    const e = schemaUsageError(r.error!.issues, input, { topP: '--top-p' });
    expect(e).toBeInstanceOf(CoreError);
    expect(e.code).toBe('usage');
    expect(e.message).toBe(
      '--n: Too small: expected number to be >=1 (got 0); --top-p: Too big: expected number to be <=1 (got 1.5); --mode: must be one of "a", "b" (got "c"); unknown key: extra',
    );
  });

  it('colour only on a terminal, unless NO_COLOR or FORCE_COLOR say otherwise', () => {
    expect(useColor({ isTTY: false }, {})).toBe(false);
    expect(useColor({ isTTY: true }, {})).toBe(true);
    expect(useColor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(useColor({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(useColor({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
  });
});

const probe = fileURLToPath(new URL('../test/fixtures/cli-probe.mjs', import.meta.url));

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runProbe(args: string[], opts: { pipeTo?: 'head'; signalAfterReady?: number } = {}): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [probe, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RLVR_DEBUG: '' } });
    let stdout = '';
    let stderr = '';
    let signals = opts.signalAfterReady ?? 0;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      // a reader that takes one line and goes away, as `| head -1` does
      if (opts.pipeTo === 'head' && stdout.includes('\n')) child.stdout.destroy();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (signals > 0 && stderr.includes('ready')) {
        while (signals-- > 0) child.kill('SIGINT');
      }
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('cliMain (a real process)', () => {
  it('exits quietly with 0 when the reader closes the pipe early', async () => {
    const r = await runProbe(['--mode', 'lines'], { pipeTo: 'head' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('one line for typed errors, bugs and errors nobody caught', async () => {
    expect(await runProbe(['--mode', 'typed'])).toMatchObject({ code: 1, stderr: 'probe: a.jsonl:3: not JSON\n' });
    expect(await runProbe(['--mode', 'bug'])).toMatchObject({
      code: 1,
      stderr: 'probe: internal error: TypeError: x is not a function (RLVR_DEBUG=1 prints the stack)\n',
    });
    expect(await runProbe(['--mode', 'emitter'])).toMatchObject({
      code: 1,
      stderr: 'probe: internal error: boom from an emitter (RLVR_DEBUG=1 prints the stack)\n',
    });
  });

  it('Ctrl-C exits 130 and removes the unfinished output file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rlvr-core-cli-'));
    const r = await runProbe(['--mode', 'hang', '--out', join(dir, 'out.jsonl')], { signalAfterReady: 1 });
    expect(r.code).toBe(130);
    expect(r.stderr).toBe('ready\nprobe: interrupted\n');
    expect(await readdir(dir)).toEqual([]);
  });

  it('a graceful command finishes on the first Ctrl-C', async () => {
    const r = await runProbe(['--mode', 'graceful', 'graceful'], { signalAfterReady: 1 });
    expect(r).toMatchObject({ code: 130, stdout: 'saved\n' });
  });
});
