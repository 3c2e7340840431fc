#!/usr/bin/env node
/**
 * rlvr-verify: grades JSONL rows `{"gold": string, "pred": string, ...}` (pred is a completion; its answer is
 * extracted) from a file or stdin, writing one line `{...other fields, "equal", "reason", "extracted"}` per row,
 * in input order. A bad line gets an error row (`"error"` set) and the rest continue.
 */
import { createReadStream, createWriteStream, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { VerifierPool } from './pool.js';
import type { VerifyOptionsInput } from './options.js';
import type { RewardResult } from './grade.js';

const USAGE = `usage: rlvr-verify [FILE] [options]

Reads JSONL rows {"gold": string, "pred": string, ...} from FILE (or stdin) and writes one row per input line:
{...other fields, "equal": boolean, "reason": string, "extracted": string|null}

options:
  -o, --output FILE        write to FILE (atomically: temp file, then rename) instead of stdout
  --concurrency N          worker threads (default: available parallelism)
  --timeout-ms N           wall-clock budget per row in ms (default 5000)
  --extract first|last     which \\boxed{} answer to grade (default last)
  --fallbacks              eval-only fallbacks when there is no \\boxed{} (anchors, last math, last number)
  --mode math|choice       multiple-choice letters with 'choice' (default math)
  --percent either|fraction|strip   how x% reads (default either)
  --ordered-lists          compare bare lists in order (default: as sets)
  --reasoning-delimiter S  grade only the text after the last S (repeatable; e.g. '</think>')
  --rel-tol X              relative tolerance for inexact values (default 1e-6)
  -h, --help               this help`;

interface Row {
  out: Record<string, unknown>;
  pending: Promise<RewardResult> | null;
}

function fail(msg: string): never {
  process.stderr.write(`rlvr-verify: ${msg}\n${USAGE}\n`);
  process.exit(2);
}

function intArg(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive integer (got ${JSON.stringify(v)})`);
  return n;
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        output: { type: 'string', short: 'o' },
        concurrency: { type: 'string' },
        'timeout-ms': { type: 'string' },
        extract: { type: 'string' },
        fallbacks: { type: 'boolean' },
        mode: { type: 'string' },
        percent: { type: 'string' },
        'ordered-lists': { type: 'boolean' },
        'reasoning-delimiter': { type: 'string', multiple: true },
        'rel-tol': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
  }
  const { values: v, positionals } = parsed;
  if (v.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  if (positionals.length > 1) fail(`expected at most one input file, got ${positionals.length}`);
  const input = positionals[0];
  const verify: VerifyOptionsInput = {};
  if (v.extract !== undefined) {
    if (v.extract !== 'first' && v.extract !== 'last') fail(`--extract must be first or last (got ${JSON.stringify(v.extract)})`);
    verify.extract = v.extract;
  }
  if (v.mode !== undefined) {
    if (v.mode !== 'math' && v.mode !== 'choice') fail(`--mode must be math or choice (got ${JSON.stringify(v.mode)})`);
    verify.mode = v.mode;
  }
  if (v.percent !== undefined) {
    if (!['either', 'fraction', 'strip'].includes(v.percent)) fail(`--percent must be either, fraction or strip (got ${JSON.stringify(v.percent)})`);
    verify.percent = v.percent as 'either' | 'fraction' | 'strip';
  }
  if (v.fallbacks) verify.fallbacks = true;
  if (v['ordered-lists']) verify.listOrder = 'ordered';
  if (v['reasoning-delimiter'] !== undefined) {
    if (v['reasoning-delimiter'].some((d) => d.length === 0)) fail('--reasoning-delimiter must not be empty');
    verify.reasoningDelimiters = v['reasoning-delimiter'];
  }
  if (v['rel-tol'] !== undefined) {
    const x = Number(v['rel-tol']);
    if (!(x > 0 && x <= 0.1)) fail(`--rel-tol must be in (0, 0.1] (got ${JSON.stringify(v['rel-tol'])})`);
    verify.relTol = x;
  }
  const concurrency = intArg(v.concurrency, 'concurrency');
  const timeoutMs = intArg(v['timeout-ms'], 'timeout-ms');

  const pool = new VerifierPool({ ...(concurrency ? { concurrency } : {}), ...(timeoutMs ? { timeoutMs } : {}), verify });
  const src = input === undefined ? process.stdin : createReadStream(input, 'utf8');
  const where = input ?? '<stdin>';
  const tmp = v.output !== undefined ? join(dirname(v.output), `.${basename(v.output)}.${process.pid}.tmp`) : null;
  const sink = tmp !== null ? createWriteStream(tmp) : process.stdout;
  const write = (s: string): Promise<void> =>
    new Promise((resolve, reject) => {
      if (sink.write(s)) resolve();
      else sink.once('drain', resolve).once('error', reject);
    });

  // Rows are graded concurrently but written in input order; at most `window` rows are held in memory.
  const window = pool.concurrency * pool.chunkSize * 4;
  const held: Row[] = [];
  let lineNo = 0;
  let bad = 0;
  const flush = async (all: boolean): Promise<void> => {
    while (held.length > 0 && (all || held.length >= window)) {
      const row = held.shift() as Row;
      if (row.pending !== null) {
        const r = await row.pending;
        Object.assign(row.out, { equal: r.reward === 1, reason: r.reason, extracted: r.extracted });
      }
      await write(JSON.stringify(row.out) + '\n');
    }
  };
  try {
    const rl = createInterface({ input: src, crlfDelay: Infinity });
    for await (const line of rl) {
      lineNo++;
      if (line.trim().length === 0) continue;
      held.push(gradeLine(line, lineNo, where, pool, () => bad++));
      await flush(false);
    }
    await flush(true);
    if (tmp !== null && v.output !== undefined) {
      await new Promise<void>((resolve, reject) => (sink as ReturnType<typeof createWriteStream>).end((e?: Error | null) => (e ? reject(e) : resolve())));
      renameSync(tmp, v.output);
    }
  } catch (e) {
    if (tmp !== null) rmSync(tmp, { force: true });
    throw e;
  } finally {
    await pool.close();
  }
  const s = pool.stats;
  process.stderr.write(`rlvr-verify: ${lineNo} lines, ${bad} bad, ${s.timedOut} timed out\n`);
}

function gradeLine(line: string, lineNo: number, where: string, pool: VerifierPool, onBad: () => void): Row {
  const bad = (msg: string): Row => {
    onBad();
    const error = `${where}:${lineNo}: ${msg}`;
    return { out: { line: lineNo, equal: false, reason: 'error', extracted: null, error }, pending: null };
  };
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch (e) {
    return bad(`invalid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (row === null || typeof row !== 'object' || Array.isArray(row)) return bad('row must be a JSON object');
  const { gold, pred, ...rest } = row as Record<string, unknown>;
  if (typeof gold !== 'string') return bad(`field gold must be a string (got ${gold === undefined ? 'nothing' : typeof gold})`);
  if (typeof pred !== 'string') return bad(`field pred must be a string (got ${pred === undefined ? 'nothing' : typeof pred})`);
  return { out: rest, pending: pool.reward(pred, gold) };
}

main().catch((e: unknown) => {
  process.stderr.write(`rlvr-verify: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
