import { spawn } from 'node:child_process';

export interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end (no shell); output as text. Asynchronous on purpose: a synchronous spawn would hold the
 * test worker's event loop for the minutes `npm pack` takes on a busy machine, and vitest's worker RPC times out.
 */
export function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The first line of a bin's `--help`: `usage: rlvr-eval ...`, or `usage: rlvr eval ...` where the bin is also an `rlvr` command. */
export function usageOf(bin: string): RegExp {
  const composed = bin.startsWith('rlvr-') ? `|rlvr ${bin.slice('rlvr-'.length)}` : '';
  return new RegExp(`^usage: (${bin}${composed})\\b`);
}
