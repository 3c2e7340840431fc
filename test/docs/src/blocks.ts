/**
 * The shell blocks of the documentation (```sh, ```bash, ```console, ```shell) and the `doc-test` marker each may
 * carry: an HTML comment on the lines right above the block, invisible on the rendered page.
 *
 *   <!-- doc-test: skip (REASON) -->               not run; the test prints REASON
 *   <!-- doc-test: short (REASON)                  run with the changes below; the test prints REASON
 *   replace: OLD => NEW                            every occurrence of OLD (literal) becomes NEW; OLD must occur
 *   append: TEXT => FLAGS                          every command containing TEXT gets FLAGS at its end
 *   drop: TEXT                                     every command containing TEXT is left out (the reason says why)
 *   -->
 *   <!-- doc-test: run (NOTE)                      run as documented, with helpers:
 *   before: COMMAND                                run first (not shown: a dataset, a run directory the block assumes)
 *   server: URL                                    the block's first command is a server: started in the background,
 *                                                  the rest runs once URL answers, then the server is stopped
 *   start: COMMAND                                 with server: COMMAND is the server instead (not shown: the block
 *                                                  is its client)
 *   requires: COMMAND                              the block is skipped, with COMMAND's output as the reason, where
 *                                                  COMMAND fails (a tool the block needs that CI may lack)
 *   -->
 *
 * `short` takes the `run` keys too. In a marker, `{port}` is a free loopback port for that block and `{tiny}` the
 * smallest training and evaluation settings of `rlvr train` and `rlvr compare` (TINY).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Marker {
  mode: 'run' | 'short' | 'skip';
  /** why the block is skipped or shortened (printed by the test), or a note */
  reason: string;
  replace: [string, string][];
  append: [string, string][];
  drop: string[];
  before: string[];
  requires: string[];
  server?: string;
  start?: string;
}

export interface Block {
  /** repository-relative path of the markdown file */
  file: string;
  /** 1-based line of the opening fence */
  line: number;
  /** the block as documented */
  text: string;
  marker: Marker;
}

/** A marker or a block that cannot be used: names the file and line. */
export class DocTestError extends Error {
  override name = 'DocTestError';
}

const FENCE = /^\s*```(sh|bash|console|shell)\s*$/;
const CLOSE = /^\s*```\s*$/;
const HEAD = /^<!--\s*doc-test:\s*(run|short|skip)\b\s*(?:\((.*)\))?\s*(-->)?\s*$/;

/** The markdown files whose shell blocks are tested: README.md, docs/, docs/benchmarks/ and every package README. */
export function docFiles(root: string): string[] {
  const md = (dir: string) =>
    readdirSync(join(root, dir))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `${dir}/${f}`);
  const packages = readdirSync(join(root, 'packages'))
    .sort()
    .map((p) => `packages/${p}/README.md`)
    .filter((f) => {
      try {
        readFileSync(join(root, f));
        return true;
      } catch {
        return false;
      }
    });
  return ['README.md', ...md('docs'), ...md('docs/benchmarks'), ...packages];
}

export function parseBlocks(file: string, source: string): Block[] {
  const lines = source.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!FENCE.test(lines[i]!)) continue;
    let end = i + 1;
    while (end < lines.length && !CLOSE.test(lines[end]!)) end++;
    if (end === lines.length) throw new DocTestError(`${file}:${i + 1}: the block is never closed`);
    const indent = /^\s*/.exec(lines[i]!)![0].length;
    const text = lines
      .slice(i + 1, end)
      .map((l) => l.slice(Math.min(indent, /^\s*/.exec(l)![0].length)))
      .join('\n');
    blocks.push({ file, line: i + 1, text, marker: markerAbove(file, lines, i) });
    i = end;
  }
  return blocks;
}

/** The marker ending on the line right above the fence at `fence` (0-based), or a plain run. */
function markerAbove(file: string, lines: string[], fence: number): Marker {
  const plain: Marker = { mode: 'run', reason: '', replace: [], append: [], drop: [], before: [], requires: [] };
  const last = fence - 1;
  if (last < 0 || !lines[last]!.trim().endsWith('-->')) return plain;
  let first = last;
  while (first >= 0 && !lines[first]!.trim().startsWith('<!--')) first--;
  if (first < 0) return plain;
  const head = HEAD.exec(lines[first]!.trim());
  if (!head) {
    if (/doc-test/.test(lines[first]!))
      throw new DocTestError(
        `${file}:${first + 1}: unreadable doc-test marker "${lines[first]!.trim()}" (run, short or skip, then a reason in parentheses)`,
      );
    return plain;
  }
  const mode = head[1] as Marker['mode'];
  const reason = head[2]?.trim() ?? '';
  if (mode !== 'run' && !reason) throw new DocTestError(`${file}:${first + 1}: a doc-test ${mode} needs a reason in parentheses`);
  const marker: Marker = { ...plain, mode, reason };
  const body = head[3] ? [] : lines.slice(first + 1, last + 1);
  if (body.length > 0) body[body.length - 1] = body[body.length - 1]!.replace(/-->\s*$/, '');
  body.forEach((raw, k) => {
    const where = `${file}:${first + 2 + k}`;
    const l = raw.trim();
    if (l === '') return;
    const kv = /^(replace|append|drop|before|server|start|requires):\s?(.*)$/.exec(l);
    if (!kv) throw new DocTestError(`${where}: unknown doc-test line "${l}" (replace, append, drop, before, server, start or requires)`);
    const [, key, value] = kv as unknown as [string, string, string];
    if (key === 'before') marker.before.push(value);
    else if (key === 'drop') marker.drop.push(value);
    else if (key === 'requires') marker.requires.push(value);
    else if (key === 'server') marker.server = value.trim();
    else if (key === 'start') marker.start = value;
    else {
      const at = value.indexOf(' => ');
      const arrow = at >= 0 ? at : value.endsWith(' =>') ? value.length - 3 : -1;
      if (arrow < 0) throw new DocTestError(`${where}: ${key} needs "OLD => NEW"`);
      const pair: [string, string] = [value.slice(0, arrow), value.slice(arrow + 4)];
      (key === 'replace' ? marker.replace : marker.append).push(pair);
    }
  });
  if (mode === 'skip' && body.some((l) => l.trim()))
    throw new DocTestError(`${file}:${first + 1}: a skipped block takes no other doc-test lines`);
  if (mode === 'short' && marker.replace.length + marker.append.length + marker.drop.length === 0)
    throw new DocTestError(`${file}:${first + 1}: a doc-test short changes something (replace, append or drop)`);
  if (marker.start && !marker.server) throw new DocTestError(`${file}:${first + 1}: doc-test start needs server: URL to probe`);
  return marker;
}

/** The script the test runs: the block with the marker's replacements and appended flags, `{port}` filled in. */
export function scriptOf(block: Block, port: number): string {
  const where = `${block.file}:${block.line}`;
  let text = block.text;
  for (const [from, to] of block.marker.replace) {
    const old = fill(from, port);
    if (!text.includes(old)) throw new DocTestError(`${where}: doc-test replace: "${old}" is not in the block (the doc changed?)`);
    text = text.split(old).join(fill(to, port));
  }
  for (const what of block.marker.drop) {
    const old = fill(what, port);
    const kept = commands(text).filter((c) => !c.includes(old));
    if (kept.length === commands(text).length)
      throw new DocTestError(`${where}: doc-test drop: no command contains "${old}" (the doc changed?)`);
    text = kept.join('\n');
  }
  for (const [what, flags] of block.marker.append) {
    const lines = text.split('\n');
    let hit = false;
    for (let i = 0; i < lines.length; i++) {
      // a command is its line and the continuation lines after a trailing backslash
      let end = i;
      while (lines[end]!.trimEnd().endsWith('\\') && end + 1 < lines.length) end++;
      if (
        lines
          .slice(i, end + 1)
          .join('\n')
          .includes(fill(what, port)) &&
        !lines[i]!.trimStart().startsWith('#')
      ) {
        const [code, comment] = splitComment(lines[end]!);
        lines[end] = `${code.trimEnd()} ${fill(flags, port)}${comment ? `   ${comment}` : ''}`;
        hit = true;
      }
      i = end;
    }
    if (!hit) throw new DocTestError(`${where}: doc-test append: no command contains "${fill(what, port)}" (the doc changed?)`);
    text = lines.join('\n');
  }
  const install = commands(text).find((c) => INSTALL.test(splitComment(c.replace(/\\\n/g, ' '))[0]));
  if (install !== undefined)
    throw new DocTestError(
      `${where}: the block runs "${install.trim()}": through the scratch directory's link it would rewrite the repository's node_modules (test/install covers installing); mark the block skip, or drop or replace the command in a short variant`,
    );
  return text;
}

/** npm's commands that write node_modules (with their aliases): never run by the doc test */
export const INSTALL_COMMANDS = [
  'ci',
  'clean-install',
  'install-clean',
  'install',
  'i',
  'add',
  'isntall',
  'install-test',
  'it',
  'cit',
  'uninstall',
  'remove',
  'rm',
  'un',
  'unlink',
  'update',
  'up',
  'upgrade',
  'link',
  'ln',
  'dedupe',
  'ddp',
  'prune',
];
const INSTALL = new RegExp(`(?:^|[;&|(]|\\s)npm\\s+(?:-\\S+\\s+)*(?:${INSTALL_COMMANDS.join('|')})(?:\\s|$|[;&|)])`);

/** The block's lines grouped into commands: a line and the continuation lines after a trailing backslash. */
function commands(text: string): string[] {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    let end = i;
    while (lines[end]!.trimEnd().endsWith('\\') && end + 1 < lines.length) end++;
    out.push(lines.slice(i, end + 1).join('\n'));
    i = end;
  }
  return out;
}

/** 2 prompts x 2 completions per step, held-out evaluation of 2 problems with 1 sample */
export const TINY = '--rollout.prompts 2 --rollout.groupSize 2 --eval.problems 2 --eval.n 1';

export function fill(text: string, port: number): string {
  return text.split('{port}').join(String(port)).split('{tiny}').join(TINY);
}

/** A line's code and its trailing `# comment` (a `#` after whitespace, outside quotes). */
function splitComment(line: string): [string, string] {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return [line.slice(0, i), line.slice(i)];
  }
  return [line, ''];
}

/** The block's first command (with its continuation lines) and the rest, for a `server:` block. */
export function splitFirstCommand(script: string): [string, string] {
  const lines = script.split('\n');
  let i = 0;
  while (i < lines.length && (lines[i]!.trim() === '' || lines[i]!.trimStart().startsWith('#'))) i++;
  let end = i;
  while (end < lines.length - 1 && lines[end]!.trimEnd().endsWith('\\')) end++;
  return [lines.slice(0, end + 1).join('\n'), lines.slice(end + 1).join('\n')];
}
