import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DocTestError, parseBlocks, scriptOf, splitFirstCommand, TINY } from './blocks.js';
import { npmGuard, pathWithoutNodeModules } from './npm-guard.js';

const doc = (...lines: string[]) => lines.join('\n');

describe('parseBlocks', () => {
  it('finds sh, bash, console and shell blocks (indented ones too) with their lines, and nothing else', () => {
    const blocks = parseBlocks(
      'x.md',
      doc(
        '# t',
        '```sh',
        'echo a',
        '```',
        '```ts',
        'let a;',
        '```',
        '1. step',
        '   ```bash',
        '   echo b \\',
        '     --c',
        '   ```',
        '```console',
        'echo d',
        '```',
      ),
    );
    expect(blocks.map((b) => [b.line, b.text, b.marker.mode])).toEqual([
      [2, 'echo a', 'run'],
      [9, 'echo b \\\n  --c', 'run'],
      [13, 'echo d', 'run'],
    ]);
  });

  it('reads a skip marker with its reason', () => {
    const [b] = parseBlocks('x.md', doc('<!-- doc-test: skip (needs a GPU) -->', '```sh', 'vllm serve m', '```'));
    expect(b!.marker).toMatchObject({ mode: 'skip', reason: 'needs a GPU' });
  });

  it('reads every key of a multi-line marker', () => {
    const [b] = parseBlocks(
      'x.md',
      doc(
        '<!-- doc-test: short (2 steps)',
        'before: echo {} > a.json',
        'replace: --steps 200 => --steps 2',
        'append: rlvr train => {tiny}',
        'drop: npm test',
        'requires: python3 -c "import numpy"',
        'start: serve --port {port}',
        'server: http://127.0.0.1:{port}/health',
        '-->',
        '```sh',
        'npx rlvr train --steps 200',
        '```',
      ),
    );
    expect(b!.marker).toEqual({
      mode: 'short',
      reason: '2 steps',
      before: ['echo {} > a.json'],
      replace: [['--steps 200', '--steps 2']],
      append: [['rlvr train', '{tiny}']],
      drop: ['npm test'],
      requires: ['python3 -c "import numpy"'],
      start: 'serve --port {port}',
      server: 'http://127.0.0.1:{port}/health',
    });
  });

  it('ignores other HTML comments', () => {
    const [b] = parseBlocks('x.md', doc('<!-- a note -->', '```sh', 'ls', '```'));
    expect(b!.marker.mode).toBe('run');
  });

  it.each([
    ['<!-- doc-test: skip -->', 'x.md:1: a doc-test skip needs a reason in parentheses'],
    ['<!-- doc-test: short (why) -->', 'x.md:1: a doc-test short changes something (replace, append or drop)'],
    [
      '<!-- doc-test: maybe (why) -->',
      'x.md:1: unreadable doc-test marker "<!-- doc-test: maybe (why) -->" (run, short or skip, then a reason in parentheses)',
    ],
    [
      '<!-- doc-test: run\nreplce: a => b\n-->',
      'x.md:2: unknown doc-test line "replce: a => b" (replace, append, drop, before, server, start or requires)',
    ],
    ['<!-- doc-test: run\nreplace: a b\n-->', 'x.md:2: replace needs "OLD => NEW"'],
    ['<!-- doc-test: run\nstart: serve\n-->', 'x.md:1: doc-test start needs server: URL to probe'],
  ])('refuses %j, naming the line', (marker, message) => {
    expect(() => parseBlocks('x.md', `${marker}\n\`\`\`sh\nls\n\`\`\``)).toThrow(new DocTestError(message));
  });

  it('refuses a block that is never closed', () => {
    expect(() => parseBlocks('x.md', '```sh\nls\n')).toThrow(new DocTestError('x.md:1: the block is never closed'));
  });
});

describe('scriptOf', () => {
  const block = (marker: string, ...body: string[]) => parseBlocks('x.md', doc(marker, '```sh', ...body, '```'))[0]!;

  it('replaces every occurrence, fills {port} and {tiny}, appends before a trailing comment and after continuations', () => {
    const b = block(
      '<!-- doc-test: short (s)\nreplace: 8000 => {port}\nappend: rlvr eval => --n 1\nappend: rlvr train => {tiny}\n-->',
      'npx rlvr train --out r   # a run',
      'npx rlvr eval --endpoint http://127.0.0.1:8000/v1 \\',
      '  --dataset "a # b.jsonl"',
      'echo 8000',
    );
    expect(scriptOf(b, 41234)).toBe(
      doc(
        `npx rlvr train --out r ${TINY}   # a run`,
        'npx rlvr eval --endpoint http://127.0.0.1:41234/v1 \\',
        '  --dataset "a # b.jsonl" --n 1',
        'echo 41234',
      ),
    );
  });

  it('drops whole commands, continuation lines included', () => {
    const b = block('<!-- doc-test: short (s)\ndrop: --chat\n-->', 'a', 'b --chat \\', '  --x', 'c');
    expect(scriptOf(b, 1)).toBe('a\nc');
  });

  it('fails when the doc no longer holds what the marker changes', () => {
    expect(() => scriptOf(block('<!-- doc-test: short (s)\nreplace: --steps 200 => --steps 2\n-->', 'rlvr train --steps 100'), 1)).toThrow(
      new DocTestError('x.md:4: doc-test replace: "--steps 200" is not in the block (the doc changed?)'),
    );
    expect(() => scriptOf(block('<!-- doc-test: short (s)\nappend: rlvr eval => --n 1\n-->', 'rlvr train'), 1)).toThrow(
      new DocTestError('x.md:4: doc-test append: no command contains "rlvr eval" (the doc changed?)'),
    );
    expect(() => scriptOf(block('<!-- doc-test: short (s)\ndrop: vllm\n-->', 'rlvr train'), 1)).toThrow(
      new DocTestError('x.md:4: doc-test drop: no command contains "vllm" (the doc changed?)'),
    );
  });
  it('refuses a block that would run an npm command writing node_modules, and lets the others through', () => {
    for (const cmd of [
      'npm ci && npm run train',
      'cd x && npm install --no-save a',
      'npm --silent i a',
      'true; npm  update',
      'npm ci \\\n  --quiet',
    ]) {
      expect(() => scriptOf(block('', cmd), 1), cmd).toThrow(DocTestError);
    }
    expect(() => scriptOf(block('', 'npm ci && npm run train'), 1)).toThrow(
      new DocTestError(
        'x.md:2: the block runs "npm ci && npm run train": through the scratch directory\'s link it would rewrite the repository\'s node_modules (test/install covers installing); mark the block skip, or drop or replace the command in a short variant',
      ),
    );
    const fine = doc('npm run build', 'npm test', 'npx rlvr train --install-dir x', '# then npm ci', 'echo "npm" install', 'npm run ci');
    expect(scriptOf(block('', fine), 1)).toBe(fine);
    expect(scriptOf(block('<!-- doc-test: short (s)\ndrop: npm ci\n-->', 'npm ci', 'npm test'), 1)).toBe('npm test');
  });
});

describe('the npm guard of the doc test', () => {
  it('refuses npm ci and install in a block, and runs every other npm command', () => {
    const dir = npmGuard(pathWithoutNodeModules());
    // in an empty folder: should the guard let an install through, it writes there, not in the repository
    const cwd = mkdtempSync(join(tmpdir(), 'rlvr-doc-guard-'));
    const run = (args: string[]) =>
      spawnSync(join(dir, 'npm'), args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_offline: 'true' } });
    const ci = run(['ci']);
    expect(ci.status).toBe(97);
    expect(ci.stderr).toBe("doc test: `npm ci` refused: it would rewrite the repository's node_modules\n");
    expect(run(['--loglevel', 'silent', 'install', 'a']).status).toBe(97);
    expect(run(['run', 'install']).status, 'a script named install').not.toBe(97);
    const version = run(['--version']);
    expect(version.status).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('splitFirstCommand', () => {
  it('takes the first command after comments, with its continuation lines', () => {
    expect(splitFirstCommand(doc('# a server', 'serve \\', '  --port 1', '# ready', 'curl x'))).toEqual([
      doc('# a server', 'serve \\', '  --port 1'),
      doc('# ready', 'curl x'),
    ]);
  });
});
