/**
 * `rlvr verify` and `rlvr advantages`: the package CLIs (`rlvr-verify` of @rlvr/math-verify,
 * `rlvr-advantages` of @rlvr/advantages) run as child processes with the same arguments,
 * standard streams and exit code, so their documentation applies word for word.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** `rlvr <command>` -> the package and bin it runs. */
export const DELEGATES = {
  verify: { pkg: '@rlvr/math-verify', bin: 'rlvr-verify' },
  advantages: { pkg: '@rlvr/advantages', bin: 'rlvr-advantages' },
} as const;
export type DelegateCommand = keyof typeof DELEGATES;

/** The absolute path of the bin script a delegate command runs. */
export function delegatePath(command: DelegateCommand): string {
  const { pkg, bin } = DELEGATES[command];
  const manifest = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
  const bins = (JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> }).bin;
  return join(dirname(manifest), bins[bin]!);
}

/** Run the package CLI with `argv`, inheriting stdin, stdout and stderr; resolves to its exit code. */
export function runDelegate(command: DelegateCommand, argv: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [delegatePath(command), ...argv], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128 + 2)));
  });
}
