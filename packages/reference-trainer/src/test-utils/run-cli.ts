import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The real built CLI (dist/cli.js); nx builds the package before its tests. */
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a Node script as a child process (colour off) and collect its exit code and output. */
export function runNode(script: string, args: readonly string[]): Promise<CliResult> {
  const { FORCE_COLOR: _force, ...env } = process.env;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Run `rlvr ...args` as a child process and collect its exit code and output. */
export function rlvr(...args: string[]): Promise<CliResult> {
  return runNode(CLI, args);
}

/** The absolute path of bin `bin` of package `pkg` (e.g. `rlvr-verify` of `@rlvr/math-verify`). */
export function binPath(pkg: string, bin: string): string {
  const manifest = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
  const bins = (JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> }).bin;
  return join(dirname(manifest), bins[bin]!);
}
