/**
 * `POST /advantages`: the `rlvr-advantages` interop rows in, per-token advantages out, for pipelines that computed
 * saliency themselves and want GRAIL or OAR-G weighting. The body is one of
 * - a JSON array of rows: `[{"group", "reward", "length", "saliency"?, "spans"?}, ...]`;
 * - JSONL: one row per line;
 * - a JSON object `{"rows": [...], "estimator"?: string, "options"?: {...}, "weights"?: boolean}`.
 * Estimator, options and `weights` may also come in the query string (`?estimator=grpo%2Bgrail&sigmaW=0.5&weights=1`),
 * which overrides the body. The whole body is one batch: groups need not be consecutive.
 *
 * The work a request may ask for is bounded by `AdvantageLimits` (tokens per row, tokens per request), checked
 * before anything is allocated; the server runs all of this in a worker thread (`advantages-worker.ts`).
 */
import { formatLocation, formatZodIssues, isRlvrError, parseJsonl } from '@rlvr/core';
import {
  InteropRowSchema,
  formatFloat32Array,
  interopBatch,
  interopRowProblem,
  optionsFromText,
  prepareEstimator,
  type InteropRow,
  type PreparedEstimator,
} from '@rlvr/advantages';
import { RewardServerError, preview } from './errors.js';

/** How much work one request may ask for (the server options of the same names). */
export interface AdvantageLimits {
  /** most completion tokens in all the rows of a request */
  maxAdvantageTokens: number;
  /** most completion tokens of one row */
  maxRowTokens: number;
}

/** The defaults of `RewardServerOptionsSchema`: 2^22 tokens a request, 2^20 a row. */
export const DEFAULT_ADVANTAGE_LIMITS: AdvantageLimits = { maxAdvantageTokens: 4 * 1024 * 1024, maxRowTokens: 1024 * 1024 };

/** What `/advantages` was asked to do, before any estimation. */
export interface AdvantagesRequest {
  rows: InteropRow[];
  estimator: string;
  options: Record<string, unknown>;
  weights: boolean;
  /** For a JSONL body: the 1-based line of each row, so errors can name it. */
  lines?: number[];
}

const DEFAULT_ESTIMATOR = 'grail';
/** Query parameters that are not estimator options. */
const OWN_PARAMS = new Set(['estimator', 'weights']);

function flag(text: string, name: string): boolean {
  if (text === '' || text === '1' || text === 'true') return true;
  if (text === '0' || text === 'false') return false;
  throw new RewardServerError('invalid_request', `query parameter ${name} must be 1, 0, true or false (got ${preview(text)})`, {
    field: name,
  });
}

/** zod issues with the offending values when they can be shown (a deeply nested value cannot: then without them). */
function issuesText(issues: Parameters<typeof formatZodIssues>[0], input: unknown): string {
  try {
    return formatZodIssues(issues, input);
  } catch {
    return formatZodIssues(issues);
  }
}

/** Splits a body that is not one JSON document into JSONL rows (and their 1-based lines); errors name the line. */
function jsonlRows(text: string): { rows: unknown[]; lines: number[] } {
  let parsed;
  try {
    parsed = parseJsonl(text, 'POST /advantages');
  } catch (err) {
    if (!isRlvrError(err)) throw err;
    const bare = err.message.slice(formatLocation(err.location).length);
    throw new RewardServerError(
      'invalid_json',
      `POST /advantages: the body is neither one JSON document nor JSONL: ${bare}`,
      { line: err.location.line! },
      { cause: err },
    );
  }
  if (parsed.length === 0)
    throw new RewardServerError(
      'invalid_json',
      'POST /advantages: the body is empty; send a JSON array of rows, JSONL, or {"rows": [...]}',
    );
  return { rows: parsed.map((l) => l.value), lines: parsed.map((l) => l.line) };
}

/**
 * Reads the body and the query string into a request; nothing is estimated yet. Rows over `limits` are refused
 * here (413 `too_many_tokens`, naming the limit and the row), before any per-token array exists.
 */
export function parseAdvantagesRequest(
  text: string,
  params: URLSearchParams,
  limits: AdvantageLimits = DEFAULT_ADVANTAGE_LIMITS,
): AdvantagesRequest {
  let doc: unknown;
  let lines: number[] | undefined;
  try {
    doc = JSON.parse(text);
  } catch {
    ({ rows: doc, lines } = jsonlRows(text));
  }
  let rawRows: unknown;
  let estimator = DEFAULT_ESTIMATOR;
  let options: Record<string, unknown> = {};
  let weights = false;
  if (Array.isArray(doc)) rawRows = doc;
  else if (doc !== null && typeof doc === 'object' && 'rows' in doc) {
    const o = doc as Record<string, unknown>;
    const extra = Object.keys(o).filter((k) => !['rows', 'estimator', 'options', 'weights'].includes(k));
    if (extra.length > 0)
      throw new RewardServerError(
        'invalid_request',
        `unknown key${extra.length > 1 ? 's' : ''} ${extra.join(', ')}; the object form takes rows, estimator, options, weights`,
        { field: extra[0]! },
      );
    rawRows = o.rows;
    if (o.estimator !== undefined) {
      if (typeof o.estimator !== 'string')
        throw new RewardServerError('invalid_request', `estimator must be a string (got ${preview(o.estimator)})`, { field: 'estimator' });
      estimator = o.estimator;
    }
    if (o.options !== undefined) {
      if (o.options === null || typeof o.options !== 'object' || Array.isArray(o.options)) {
        throw new RewardServerError('invalid_request', `options must be a JSON object of estimator options (got ${preview(o.options)})`, {
          field: 'options',
        });
      }
      options = { ...(o.options as Record<string, unknown>) };
    }
    if (o.weights !== undefined) {
      if (typeof o.weights !== 'boolean')
        throw new RewardServerError('invalid_request', `weights must be true or false (got ${preview(o.weights)})`, { field: 'weights' });
      weights = o.weights;
    }
  } else if (doc !== null && typeof doc === 'object')
    rawRows = [doc]; // a one-line JSONL body
  else
    throw new RewardServerError(
      'invalid_request',
      `POST /advantages takes a JSON array of rows, JSONL, or {"rows": [...]}; got ${preview(doc)}`,
    );
  if (!Array.isArray(rawRows))
    throw new RewardServerError('invalid_request', `rows must be an array of rows (got ${preview(rawRows)})`, { field: 'rows' });
  if (rawRows.length === 0) throw new RewardServerError('invalid_request', 'rows is empty: send at least one rollout', { field: 'rows' });

  const optionParams: [string, string][] = [];
  for (const [name, value] of params) {
    if (name === 'estimator')
      estimator = value.replace(/ /g, '+'); // an unescaped '+' arrives as a space
    else if (name === 'weights') weights = flag(value, name);
    else if (!OWN_PARAMS.has(name)) optionParams.push([name, value]);
  }
  options = { ...options, ...optionsFromText(optionParams) };
  const rows = rawRows.map((raw, i) => {
    const r = InteropRowSchema.safeParse(raw);
    const where = lines ? { line: lines[i]!, index: i } : { index: i };
    if (!r.success) {
      const first = r.error.issues[0];
      throw new RewardServerError(
        'invalid_request',
        `row ${i}: ${issuesText(r.error.issues.slice(0, 5), raw)}`,
        { ...where, ...(first ? { field: first.path.map(String).join('.') } : {}) },
        { cause: r.error },
      );
    }
    return r.data;
  });
  let total = 0;
  rows.forEach((row, i) => {
    if (row.length > limits.maxRowTokens) {
      throw new RewardServerError(
        'too_many_tokens',
        `row ${i} has length ${row.length}, more than the limit of ${limits.maxRowTokens} tokens per row (server option maxRowTokens, CLI --max-row-tokens)`,
        { ...(lines ? { line: lines[i]! } : {}), index: i, field: 'length' },
      );
    }
    total += row.length;
  });
  if (total > limits.maxAdvantageTokens) {
    throw new RewardServerError(
      'too_many_tokens',
      `the rows hold ${total} completion tokens, more than the limit of ${limits.maxAdvantageTokens} per request (server option maxAdvantageTokens, CLI --max-advantage-tokens); split the batch over several requests`,
      { field: 'rows' },
    );
  }
  return lines ? { rows, estimator, options, weights, lines } : { rows, estimator, options, weights };
}

/** Where row `i` is in the request: its index, and its line for a JSONL body. */
function where(req: AdvantagesRequest, i: number): { index: number; line?: number } {
  return req.lines ? { index: i, line: req.lines[i]! } : { index: i };
}

/** Resolves the estimator and its options; the errors of `@rlvr/advantages` become `invalid_estimator`. */
function prepare(req: AdvantagesRequest): PreparedEstimator {
  let prepared: PreparedEstimator;
  try {
    prepared = prepareEstimator(req.estimator, req.options);
  } catch (err) {
    if (isRlvrError(err)) throw new RewardServerError('invalid_estimator', err.message, {}, { cause: err });
    // formatting a deeply nested option value for the message overflows the stack
    if (err instanceof RangeError)
      throw new RewardServerError(
        'invalid_estimator',
        `estimator ${req.estimator}: options are not valid (${err.message})`,
        { field: 'options' },
        { cause: err },
      );
    throw err;
  }
  if (prepared.needs.length > 1) {
    throw new RewardServerError(
      'invalid_estimator',
      `estimator ${req.estimator} needs ${prepared.needs.length} signals (${prepared.needs.join(', ')}); rows carry one ("saliency")`,
    );
  }
  return prepared;
}

/**
 * Runs the estimator over the rows and writes the response JSON:
 * `{"estimator", "config", "advantages": number[][], "weights"?: number[][], "sequenceAdvantages": number[], "metrics"}`,
 * row i's arrays having `length_i` entries (float32 values as the shortest decimals that read back the same;
 * `sequenceAdvantages` are float64; NaN metrics are null).
 */
export function estimateToJson(req: AdvantagesRequest): string {
  const prepared = prepare(req);
  const needsSaliency = prepared.needs.length > 0;
  req.rows.forEach((row, i) => {
    const p = interopRowProblem(row, needsSaliency);
    if (p) throw new RewardServerError('invalid_request', `row ${i}: ${p.message}`, { ...where(req, i), field: p.field });
  });
  let result;
  let offsets: Int32Array;
  try {
    const { batch, signals } = interopBatch(req.rows, prepared.needs);
    offsets = batch.completionOffsets;
    result = prepared.estimate(batch, signals);
  } catch (err) {
    if (isRlvrError(err)) {
      const at = err.location.rollout;
      throw new RewardServerError('invalid_request', err.message, at !== undefined ? where(req, at) : {}, { cause: err });
    }
    throw err;
  }
  const B = req.rows.length;
  const perRow = (values: Float32Array) => {
    const parts: string[] = new Array(B);
    for (let i = 0; i < B; i++) parts[i] = formatFloat32Array(values, offsets[i]!, offsets[i + 1]!);
    return '[' + parts.join(',') + ']';
  };
  const metrics = Object.fromEntries(Object.entries(result.metrics).map(([k, v]) => [k, Number.isFinite(v) ? v : null]));
  let out = `{"estimator":${JSON.stringify(prepared.estimator.name)},"config":${JSON.stringify(prepared.config)},"advantages":${perRow(result.advantages)}`;
  if (req.weights) out += `,"weights":${perRow(result.weights)}`;
  out += `,"sequenceAdvantages":${JSON.stringify(Array.from(result.sequenceAdvantages, (v) => (Number.isFinite(v) ? v : null)))},"metrics":${JSON.stringify(metrics)}}`;
  return out;
}

/** One `/advantages` answer: the status and the JSON body; `internal` is what threw behind a 500, for the server's log. */
export interface AdvantagesAnswer {
  status: number;
  json: string;
  internal?: { message: string; stack?: string };
}

/** The whole route on a body and a query string: never throws; a refusal is its 4xx answer. */
export function answerAdvantages(text: string, query: string, limits: AdvantageLimits = DEFAULT_ADVANTAGE_LIMITS): AdvantagesAnswer {
  try {
    return { status: 200, json: estimateToJson(parseAdvantagesRequest(text, new URLSearchParams(query), limits)) };
  } catch (err) {
    if (err instanceof RewardServerError) return { status: err.status, json: JSON.stringify(err.toJSON()) };
    const e = new RewardServerError('internal', err instanceof Error ? `${err.name}: ${err.message}` : String(err), {}, { cause: err });
    return {
      status: e.status,
      json: JSON.stringify(e.toJSON()),
      internal: { message: e.message, ...(err instanceof Error && err.stack ? { stack: err.stack } : {}) },
    };
  }
}
