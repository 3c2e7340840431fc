import { spawnSync } from 'node:child_process';

export interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (no shell); output as text. */
export function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Ran {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The first line of a bin's `--help`: `usage: rlvr-eval ...`, or `usage: rlvr eval ...` where the bin is also an `rlvr` command. */
export function usageOf(bin: string): RegExp {
  const composed = bin.startsWith('rlvr-') ? `|rlvr ${bin.slice('rlvr-'.length)}` : '';
  return new RegExp(`^usage: (${bin}${composed})\\b`);
}
