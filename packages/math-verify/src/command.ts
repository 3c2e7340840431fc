/**
 * `rlvr-verify` (also `rlvr verify`): grades JSONL rows `{"gold": string|number, "pred": string, ...}` (pred is a
 * completion; its answer is extracted) from a file or stdin on a `VerifierPool`, writing one row per input row, in
 * input order: the row as it came, plus `equal`, `reason`, `extracted`. A bad line gets an error row and the rest
 * continue; the exit status is 1 when any line was bad. Built on core's CLI layout (`Command`), so the bin and
 * `rlvr verify` are the same code.
 */
import {
  AtomicWriter,
  type Command,
  type CommandContext,
  type FlagValues,
  choiceFlag,
  intFlag,
  numberFlag,
  readJsonl,
  usageError,
} from '@rlvr/core';
import { MathVerifyError } from './errors.js';
import type { RewardResult } from './grade.js';
import { type VerifyOptionsInput, resolveOptions } from './options.js';
import { VerifierPool } from './pool.js';

const USAGE = `usage: rlvr-verify [FILE] [options]        (the same command as: rlvr verify)

Reads JSONL rows {"gold": string|number, "pred": string, ...} from FILE (or stdin) and writes one row per input row, in order:
the row as it came, plus "equal": boolean, "reason": string, "extracted": string|null, and "limit": "size"|"depth"
when the answer or gold ran into a bound of the grader. A bad line gets an error row
{"line", "equal": false, "reason": "error", "extracted": null, "error"} and the rest continue.
Exit status: 0 all rows graded, 1 a bad line (or unreadable input / unwritable output), 2 bad usage, 130 interrupted.

options:
  -o, --output FILE          write to FILE (appears complete or not at all) instead of stdout
  --concurrency N            worker threads, 1-256 (default: available parallelism)
  --timeout-ms N             wall-clock budget per row in ms, 1-600000 (default 5000)
  --extract first|last       which \\boxed{} answer to grade (default last)
  --fallbacks                eval-only fallbacks when there is no \\boxed{} (anchors, last math, last number)
  --mode math|choice|auto    multiple-choice letters with 'choice'; 'auto': where the gold is a choice (default math)
  --percent either|fraction|strip   how x% reads (default either)
  --ordered-lists            compare bare lists in order (default: as sets)
  --reasoning-delimiter S    grade only the text after the last S (repeatable; e.g. '</think>')
  --rel-tol X                relative tolerance for inexact values, in (0, 0.1] (default 1e-9: float noise only)
  --round-to N               the problem asks for N decimal places: both sides are rounded to N, 0-12
  --rounded-decimals         accept a decimal that is the exact value rounded to its own digits (1.414 for sqrt 2)
  --decimal-comma            1,22 is the decimal 1.22 (default: 56,76 is two quantities)
  --allow-set-relation       accept an inequality for an interval gold (x >= 5 for [5, oo))
  --lenient                  strict off: also other variable names (f(y) for f(x)); allows --allow-set-relation
  --gold-field NAME          the field holding the gold answer (default gold)
  --pred-field NAME          the field holding the completion (default pred)
  --problem-field NAME       the field holding the problem statement: its unit, rounding, form and options decide
                             (docs/grader-contract.md); a row without it (or null) is graded without one
  --strict-form              with a problem: refuse an equal value in another form than asked (a decimal for
                             "as a common fraction")
  --overwrite                replace "equal"/"reason"/"extracted" a row already has (re-grading graded rows);
                             without it such a row is a bad line
  -h, --help                 this help`;

/** The fields the verdict adds to each row. */
const VERDICT_FIELDS = ['equal', 'reason', 'extracted', 'limit'] as const;

/** Verifier options from the flags; each bad value is a usage error naming its flag. */
function verifyOptions(v: FlagValues): VerifyOptionsInput {
  const o: VerifyOptionsInput = {};
  const extract = choiceFlag(v, 'extract', ['first', 'last'] as const);
  if (extract !== undefined) o.extract = extract;
  const mode = choiceFlag(v, 'mode', ['math', 'choice', 'auto'] as const);
  if (mode !== undefined) o.mode = mode;
  const percent = choiceFlag(v, 'percent', ['either', 'fraction', 'strip'] as const);
  if (percent !== undefined) o.percent = percent;
  if (v.fallbacks === true) o.fallbacks = true;
  if (v['ordered-lists'] === true) o.listOrder = 'ordered';
  if (v['rounded-decimals'] === true) o.roundedDecimals = true;
  if (v['decimal-comma'] === true) o.decimalComma = true;
  if (v['allow-set-relation'] === true) o.allowSetRelationComp = true;
  if (v.lenient === true) o.strict = false;
  if (v['strict-form'] === true) o.strictForm = true;
  const delimiters = v['reasoning-delimiter'] as string[] | undefined;
  if (delimiters !== undefined) {
    if (delimiters.some((d) => d.length === 0)) throw usageError('must not be empty', 'reasoning-delimiter');
    o.reasoningDelimiters = delimiters;
  }
  const relTol = numberFlag(v, 'rel-tol', { max: 0.1 });
  if (relTol !== undefined) {
    if (!(relTol > 0)) throw usageError(`must be a number above 0 and at most 0.1 (got ${JSON.stringify(v['rel-tol'])})`, 'rel-tol');
    o.relTol = relTol;
  }
  const roundTo = intFlag(v, 'round-to', { min: 0, max: 12 });
  if (roundTo !== undefined) o.roundTo = roundTo;
  return o;
}

/** Writes to stdout (waiting for 'drain' when a pipe is full, with no listener left behind) or to an atomic file. */
type Sink = { write(s: string): Promise<void>; commit(): Promise<void>; abort(): Promise<void> };

function streamSink(out: CommandContext['io']['stdout']): Sink {
  const stream = out as Partial<NodeJS.WritableStream> & { write(s: string): unknown };
  const write = (s: string): Promise<void> => {
    if (stream.write(s) !== false || typeof stream.once !== 'function' || typeof stream.removeListener !== 'function')
      return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (err?: unknown): void => {
        stream.removeListener?.('drain', done);
        stream.removeListener?.('error', done);
        if (err instanceof Error) reject(err);
        else resolve();
      };
      stream.once?.('drain', done);
      stream.once?.('error', done);
    });
  };
  return { write, commit: async () => undefined, abort: async () => undefined };
}

interface Row {
  out: Record<string, unknown>;
  pending: Promise<RewardResult> | null;
}

async function run(ctx: CommandContext): Promise<number> {
  const v = ctx.values;
  if (ctx.positionals.length > 1)
    throw usageError(`takes at most one input file (got ${ctx.positionals.length}: ${ctx.positionals.join(' ')})`);
  const verify = verifyOptions(v);
  resolveOptions(verify); // every flag was checked; this checks their combination
  const concurrency = intFlag(v, 'concurrency', { min: 1, max: 256 });
  const timeoutMs = intFlag(v, 'timeout-ms', { min: 1, max: 600_000 });
  const goldField = (v['gold-field'] as string | undefined) ?? 'gold';
  const predField = (v['pred-field'] as string | undefined) ?? 'pred';
  if (goldField === '' || predField === '') throw usageError('must not be empty', goldField === '' ? 'gold-field' : 'pred-field');
  const problemField = v['problem-field'] as string | undefined;
  if (problemField === '') throw usageError('must not be empty', 'problem-field');
  const overwrite = v.overwrite === true;
  const input = ctx.positionals[0];
  const where = input ?? '<stdin>';
  const output = v.output as string | undefined;
  if (input === undefined && ctx.io.stdin === undefined) throw usageError('no input: give FILE or pipe rows into stdin');

  // An unwritable -o fails here, before any work, with one line (the directory is missing, not writable, ...).
  const sink: Sink = output !== undefined ? await AtomicWriter.open(output) : streamSink(ctx.io.stdout);
  let pool: VerifierPool | null = null;
  let bad = 0;
  let rows = 0;
  try {
    pool = new VerifierPool({
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      verify,
    });
    const p = pool;
    const badRow = (line: number, error: string): Row => {
      bad++;
      return { out: { line, equal: false, reason: 'error', extracted: null, error }, pending: null };
    };
    const gradeRow = (value: unknown, line: number): Row => {
      const fail = (field: string | undefined, msg: string): Row =>
        badRow(line, new MathVerifyError('invalid_row', msg, { file: where, line, ...(field !== undefined ? { field } : {}) }).message);
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        return fail(
          undefined,
          `a row must be a JSON object (got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value})`,
        );
      const row = value as Record<string, unknown>;
      const goldValue = row[goldField];
      const pred = row[predField];
      const got = (x: unknown): string => (x === undefined ? 'nothing' : x === null ? 'null' : Array.isArray(x) ? 'an array' : typeof x);
      // A numeric gold (`"answer": 72`, as AIME and GSM8K rows carry it) is read as its text, as `rlvr train` and the
      // reward server read it (`1e+21` is then scientific notation to the grader).
      const gold = typeof goldValue === 'number' && Number.isFinite(goldValue) ? String(goldValue) : goldValue;
      if (typeof gold !== 'string') return fail(goldField, `must be a string or a number (got ${got(goldValue)})`);
      if (typeof pred !== 'string') return fail(predField, `must be a string (got ${got(pred)})`);
      const problem = problemField === undefined ? undefined : row[problemField];
      if (problem !== undefined && problem !== null && typeof problem !== 'string')
        return fail(problemField, `must be a string or null (got ${got(problem)})`);
      const taken = VERDICT_FIELDS.find((f) => Object.hasOwn(row, f));
      if (taken !== undefined && !overwrite)
        return fail(taken, 'the verdict would overwrite it (an already graded row? pass --overwrite to re-grade)');
      const pending = typeof problem === 'string' ? p.reward(pred, gold, { ...verify, problem }) : p.reward(pred, gold);
      // Never an unhandled rejection: a closed pool (the output pipe closed, Ctrl-C) rejects what is still pending.
      pending.catch(() => undefined);
      return { out: { ...row }, pending };
    };

    // Rows are graded concurrently but written in input order; at most `window` rows are held in memory.
    const window = pool.concurrency * pool.chunkSize * 4;
    const held: Row[] = [];
    const flush = async (all: boolean): Promise<void> => {
      while (held.length > 0 && (all || held.length >= window)) {
        const row = held.shift() as Row;
        if (row.pending !== null) {
          const r = await row.pending;
          for (const f of VERDICT_FIELDS) delete row.out[f];
          Object.assign(row.out, { equal: r.reward === 1, reason: r.reason, extracted: r.extracted }, r.limit ? { limit: r.limit } : {});
        }
        await sink.write(JSON.stringify(row.out) + '\n');
      }
    };
    for await (const { line, value, error } of readJsonl(
      input ?? (ctx.io.stdin as NodeJS.ReadableStream & import('node:stream').Readable),
      { name: where, invalidLines: 'yield' },
    )) {
      rows++;
      held.push(error !== undefined ? badRow(line, error.message) : gradeRow(value, line));
      await flush(false);
    }
    await flush(true);
    await sink.commit();
  } catch (e) {
    await sink.abort();
    throw e;
  } finally {
    await pool?.close();
  }
  const s = pool.stats;
  ctx.io.stderr.write(
    `${ctx.prog}: ${rows} rows, ${bad} bad, ${s.timedOut} timed out${output !== undefined ? `, written to ${output}` : ''}\n`,
  );
  return bad > 0 ? 1 : 0;
}

/** `rlvr-verify`, as a core `Command`: the bin runs it with `cliMain`, and `rlvr verify` composes it. */
export const verifyCommand: Command = {
  summary: 'grade JSONL rows {gold, pred} with the math verifier (worker pool, per-row time limit)',
  usage: USAGE,
  positionals: true,
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
    'round-to': { type: 'string' },
    'rounded-decimals': { type: 'boolean' },
    'decimal-comma': { type: 'boolean' },
    'allow-set-relation': { type: 'boolean' },
    lenient: { type: 'boolean' },
    'gold-field': { type: 'string' },
    'pred-field': { type: 'string' },
    'problem-field': { type: 'string' },
    'strict-form': { type: 'boolean' },
    overwrite: { type: 'boolean' },
  },
  run,
};
