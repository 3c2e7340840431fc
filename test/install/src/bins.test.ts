/**
 * Every bin runs on a fresh clone after `npm ci`, however it is called: the bin files are committed shims (so npm
 * links them and sets their mode at install, before anything is built), and they run the built CLI. `npx` finds
 * them locally and never asks the registry (the names are unclaimed there: a squatter's package must never run).
 */
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BINS, ROOT } from './packages.js';
import { run, usageOf } from './run.js';

/** npm with the registry unreachable: a bin that is not found locally fails instead of being fetched. */
const offline = { ...process.env, npm_config_offline: 'true', npm_config_registry: 'http://127.0.0.1:9/' };

describe('bins after npm ci', () => {
  it('the project has the bins the docs use', async () => {
    expect(BINS.map((b) => b.name).sort()).toEqual(
      [
        'rlvr',
        'rlvr-advantages',
        'rlvr-eval',
        'rlvr-policy',
        'rlvr-report',
        'rlvr-reward-server',
        'rlvr-rollout',
        'rlvr-saliency',
        'rlvr-serve',
        'rlvr-verify',
      ].sort(),
    );
  });

  it.each(BINS)('$name: a committed executable file, not a build output', async ({ pkg, path }) => {
    expect(path).toMatch(/^\.\/bin\/[\w-]+\.js$/);
    const file = `${pkg.dir}/${path.slice(2)}`;
    const staged = await run('git', ['ls-files', '-s', '--', file], ROOT);
    expect(staged.stdout, `${file} is not in git`).toMatch(/^100755 /);
  });

  it.each(BINS)('$name: linked in node_modules/.bin and runs, by npx, npm exec and the link', async ({ pkg, name, path }) => {
    const link = join(ROOT, 'node_modules', '.bin', name);
    expect(realpathSync(link)).toBe(realpathSync(join(ROOT, pkg.dir, path)));
    for (const [cmd, args] of [
      ['npx', ['--no-install', name, '--help']],
      ['npx', [name, '--help']],
      ['npm', ['exec', '--', name, '--help']],
      [link, ['--help']],
    ] as const) {
      const r = await run(cmd, [...args], ROOT, offline);
      expect({ how: `${cmd} ${args.join(' ')}`, status: r.status, stderr: r.stderr }).toEqual({
        how: `${cmd} ${args.join(' ')}`,
        status: 0,
        stderr: '',
      });
      expect(r.stdout).toMatch(usageOf(name));
    }
  });

  it('a bin whose package is not built says how to build it (exit 1), with no stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlvr-unbuilt-'));
    mkdirSync(join(dir, 'bin'));
    copyFileSync(join(ROOT, 'packages/reference-trainer/bin/rlvr.js'), join(dir, 'bin', 'rlvr.js'));
    const r = await run(process.execPath, [join(dir, 'bin', 'rlvr.js'), 'train'], dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`rlvr: ${join(dir, 'dist', 'cli.js')} is not built yet; run \`npm run build\` at the repository root\n`);
  });
});
