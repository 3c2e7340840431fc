/**
 * Runs the shell blocks of documentation files as vitest tests, as documented or in the short variant the block's
 * `doc-test` marker gives (see blocks.ts), one test per block named by file and line. The blocks of one file run in
 * order in one scratch directory that links every top-level entry of the repository (so `npx rlvr`, `packages/...` and
 * `tools/...` resolve as at the root) and holds what the blocks write (`runs/`, datasets): the tree is never written
 * to, apart from build outputs (nx works on the repository itself). npm runs with the registry unreachable, so `npx`
 * finds the repository's bins or fails; it never fetches.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { type Block, fill, parseBlocks, scriptOf, splitFirstCommand } from './blocks.js';
import { npmGuard, pathWithoutNodeModules } from './npm-guard.js';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** never linked into a scratch directory: what blocks write, and the repository's own state */
const PRIVATE = new Set(['.git', '.nx', 'runs', 'tmp', '.bench-out', 'coverage']);

const userPath = pathWithoutNodeModules();

const env: NodeJS.ProcessEnv = {
  ...process.env,
  PATH: `${npmGuard(userPath)}:${userPath}`,
  npm_config_offline: 'true',
  npm_config_registry: 'http://127.0.0.1:9/',
  npm_config_update_notifier: 'false',
  // nx does not find the projects through the scratch directory's links: it works on the repository
  NX_WORKSPACE_ROOT_PATH: ROOT,
  NX_DAEMON: 'false',
  NX_NO_CLOUD: 'true',
  NX_TUI: 'false',
  NO_COLOR: '1',
};

/** The files git does not know and does not ignore: what a block would leave in the tree. */
function untracked(): string {
  return execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.startsWith('??'))
    .join('\n');
}

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rlvr-doc-'));
  for (const entry of readdirSync(ROOT)) if (!PRIVATE.has(entry)) symlinkSync(join(ROOT, entry), join(dir, entry));
  return dir;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

interface Done {
  status: number | null;
  out: string;
}

/** `bash -e -o pipefail -c script` in its own process group (so its background jobs can be stopped with it). */
function start(script: string, cwd: string): { child: ChildProcess; done: Promise<Done> } {
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
  const done = new Promise<Done>((resolve, reject) => {
    child.on('error', reject);
    // when bash exits, what it left in the background (a server started with &) goes with it: its output pipes
    // would otherwise keep the block open
    child.on('exit', () => stop(child));
    child.on('close', (status) => resolve({ status, out }));
  });
  return { child, done };
}

function stop(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    // the group has already exited
  }
}

/** Polls `url` until it answers (any HTTP status); rejects if the server exits first. */
async function answered(url: string, server: Promise<Done>): Promise<void> {
  let exited: Done | undefined;
  void server.then((d) => (exited = d));
  for (;;) {
    if (exited) throw new Error(`the server exited (status ${exited.status}) before ${url} answered:\n${exited.out}`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

function report(where: string, script: string, d: Done): string {
  const out = d.out.length > 6000 ? `...\n${d.out.slice(-6000)}` : d.out;
  return `${where} exited with status ${d.status}\n--- script ---\n${script}\n--- output ---\n${out}`;
}

/** Runs one block; returns why it was skipped when its `requires:` command fails. */
async function runBlock(block: Block, cwd: string): Promise<string | undefined> {
  const where = `${block.file}:${block.line}`;
  for (const need of block.marker.requires) {
    const r = start(need, cwd);
    const d = await r.done;
    if (d.status !== 0) return `needs \`${need}\` to succeed, and here it does not:\n${d.out.trim()}`;
  }
  const port = await freePort();
  const script = scriptOf(block, port);
  for (const before of block.marker.before) {
    const b = start(fill(before, port), cwd);
    const d = await b.done;
    stop(b.child);
    if (d.status !== 0) throw new Error(`${where}: doc-test before: ${report(where, before, d)}`);
  }
  if (!block.marker.server) {
    const s = start(script, cwd);
    const d = await s.done;
    stop(s.child);
    expect(d.status, report(where, script, d)).toBe(0);
    return undefined;
  }
  const [serverCmd, rest] = block.marker.start ? [fill(block.marker.start, port), script] : splitFirstCommand(script);
  const server = start(serverCmd, cwd);
  try {
    await answered(fill(block.marker.server, port), server.done);
    if (rest.trim()) {
      const c = start(rest, cwd);
      const d = await c.done;
      stop(c.child);
      expect(d.status, report(where, rest, d)).toBe(0);
    }
  } finally {
    stop(server.child);
    await server.done;
  }
  return undefined;
}

/** One describe per file, one test per block, then a check that the blocks left no file in the tree. */
export function docTests(paths: string[]): void {
  const before = untracked();
  const files = paths.map((file) => ({ file, blocks: parseBlocks(file, readFileSync(join(ROOT, file), 'utf8')) }));
  for (const { file, blocks } of files.filter((f) => f.blocks.length > 0)) {
    describe(file, () => {
      let dir: string | undefined;
      for (const block of blocks) {
        const name = `${block.file}:${block.line}`;
        const { mode, reason } = block.marker;
        if (mode === 'skip') {
          it.skip(`${name} skipped: ${reason}`, () => {});
          continue;
        }
        it(mode === 'short' ? `${name} (short: ${reason})` : name, async (ctx) => {
          dir ??= scratch();
          const skipped = await runBlock(block, dir);
          if (skipped) {
            console.log(`${name} skipped: ${skipped}`);
            ctx.skip();
          }
        });
      }
    });
  }

  describe('the documentation blocks', () => {
    it('left no file in the repository', () => {
      expect(untracked()).toBe(before);
    });
  });

  afterAll(() => {
    const all = files.flatMap((f) => f.blocks);
    const count = (m: string) => all.filter((b) => b.marker.mode === m).length;
    console.log(`doc blocks: ${all.length} (${count('run')} as documented, ${count('short')} short variants, ${count('skip')} skipped)`);
    for (const b of all.filter((x) => x.marker.mode === 'skip')) console.log(`  skipped ${b.file}:${b.line}: ${b.marker.reason}`);
  });
}
