/**
 * The `npm` the documentation blocks run: it refuses the commands that write node_modules and runs the real npm
 * otherwise. Why: a block's `npm ci` in the scratch directory would rewrite the repository's node_modules through the
 * directory's link, and the static check of blocks.ts cannot see a command a script builds, or one that runs after a
 * failed `cd` in an `&&` list (bash -e goes on past a failure that is not the list's last command).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INSTALL_COMMANDS } from './blocks.js';

/** npm commands that leave node_modules alone and that the documentation runs: the guard stops looking there */
const OTHER_COMMANDS = [
  'run',
  'run-script',
  'rum',
  'urn',
  'test',
  't',
  'tst',
  'exec',
  'x',
  'pack',
  'start',
  'version',
  'view',
  'ls',
  'config',
  'help',
];

/** A user's shell PATH: without the node_modules/.bin folders that npm and vitest put on it. */
export function pathWithoutNodeModules(): string {
  return (process.env.PATH ?? '')
    .split(':')
    .filter((d) => !d.includes('node_modules'))
    .join(':');
}

/** A new folder holding the guarded `npm`, which runs the npm found on `path`. */
export function npmGuard(path: string): string {
  const real = execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8', env: { ...process.env, PATH: path } }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'rlvr-doc-npm-'));
  const shim = [
    '#!/bin/sh',
    // the command is the first argument that names one; a word before it is a flag's value (--loglevel silent)
    'for a in "$@"; do',
    '  case "$a" in --) break ;; -*) continue ;; esac',
    `  case "$a" in ${INSTALL_COMMANDS.join('|')}) echo "doc test: \\\`npm $a\\\` refused: it would rewrite the repository's node_modules" >&2; exit 97 ;; esac`,
    `  case "$a" in ${OTHER_COMMANDS.join('|')}) break ;; esac`,
    'done',
    `exec '${real}' "$@"`,
    '',
  ].join('\n');
  writeFileSync(join(dir, 'npm'), shim);
  chmodSync(join(dir, 'npm'), 0o755);
  return dir;
}
