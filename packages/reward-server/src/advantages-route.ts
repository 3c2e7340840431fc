/**
 * `POST /advantages`: the `rlvr-advantages` interop rows in, per-token advantages out, for pipelines that computed
 * saliency themselves and want GRAIL or OAR-G weighting. The body is one of
 * - a JSON array of rows: `[{"group", "reward", "length", "saliency"?, "spans"?}, ...]`;
 * - JSONL: one row per line;
 * - a JSON object `{"rows": [...], "estimator"?: string, "options"?: {...}, "weights"?: boolean}`.
 * Estimator, options and `weights` may also come in the query string (`?estimator=grpo%2Bgrail&sigmaW=0.5&weights=1`),
 * which overrides the body. The whole body is one batch: groups need not be consecutive.
 */
import { CoreError, formatZodIssues } from '@rlvr/core';
import { AdvantagesError, InteropRowSchema, formatFloat32Array, interopBatch, interopRowProblem, prepareEstimator, type InteropRow, type PreparedEstimator } from '@rlvr/advantages';
import { RewardServerError, preview } from './errors.js';

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

/** `sigma-w` -> `sigmaW` (the CLI's flag spelling works in query strings too). */
function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `0.5` -> 0.5, `true` -> true, anything else stays a string (zod then names the field if it is wrong). */
function paramValue(text: string): unknown {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  return text;
}

function flag(text: string, name: string): boolean {
  if (text === '' || text === '1' || text === 'true') return true;
  if (text === '0' || text === 'false') return false;
  throw new RewardServerError('invalid_request', `query parameter ${name} must be 1, 0, true or false (got ${preview(text)})`, { field: name });
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
function parseJsonl(text: string): { rows: unknown[]; lines: number[] } {
  const rows: unknown[] = [];
  const numbers: number[] = [];
  const lines = text.split('\n');
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!.trim();
    if (line === '') continue;
    try {
      rows.push(JSON.parse(line));
      numbers.push(k + 1);
    } catch (err) {
      throw new RewardServerError('invalid_json', `POST /advantages: the body is neither one JSON document nor JSONL: ${(err as Error).message}`, { line: k + 1 }, { cause: err });
    }
  }
  if (rows.length === 0) throw new RewardServerError('invalid_json', 'POST /advantages: the body is empty; send a JSON array of rows, JSONL, or {"rows": [...]}');
  return { rows, lines: numbers };
}

/** Reads the body and the query string into a request; nothing is estimated yet. */
export function parseAdvantagesRequest(text: string, params: URLSearchParams): AdvantagesRequest {
  let doc: unknown;
  let lines: number[] | undefined;
  try {
    doc = JSON.parse(text);
  } catch {
    ({ rows: doc, lines } = parseJsonl(text));
  }
  let rawRows: unknown;
  let estimator = DEFAULT_ESTIMATOR;
  let options: Record<string, unknown> = {};
  let weights = false;
  if (Array.isArray(doc)) rawRows = doc;
  else if (doc !== null && typeof doc === 'object' && 'rows' in doc) {
    const o = doc as Record<string, unknown>;
    const extra = Object.keys(o).filter((k) => !['rows', 'estimator', 'options', 'weights'].includes(k));
    if (extra.length > 0) throw new RewardServerError('invalid_request', `unknown key${extra.length > 1 ? 's' : ''} ${extra.join(', ')}; the object form takes rows, estimator, options, weights`, { field: extra[0]! });
    rawRows = o.rows;
    if (o.estimator !== undefined) {
      if (typeof o.estimator !== 'string') throw new RewardServerError('invalid_request', `estimator must be a string (got ${preview(o.estimator)})`, { field: 'estimator' });
      estimator = o.estimator;
    }
    if (o.options !== undefined) {
      if (o.options === null || typeof o.options !== 'object' || Array.isArray(o.options)) {
        throw new RewardServerError('invalid_request', `options must be a JSON object of estimator options (got ${preview(o.options)})`, { field: 'options' });
      }
      options = { ...(o.options as Record<string, unknown>) };
    }
    if (o.weights !== undefined) {
      if (typeof o.weights !== 'boolean') throw new RewardServerError('invalid_request', `weights must be true or false (got ${preview(o.weights)})`, { field: 'weights' });
      weights = o.weights;
    }
  } else if (doc !== null && typeof doc === 'object') rawRows = [doc]; // a one-line JSONL body
  else throw new RewardServerError('invalid_request', `POST /advantages takes a JSON array of rows, JSONL, or {"rows": [...]}; got ${preview(doc)}`);
  if (!Array.isArray(rawRows)) throw new RewardServerError('invalid_request', `rows must be an array of rows (got ${preview(rawRows)})`, { field: 'rows' });
  if (rawRows.length === 0) throw new RewardServerError('invalid_request', 'rows is empty: send at least one rollout', { field: 'rows' });

  for (const [name, value] of params) {
    if (name === 'estimator') estimator = value.replace(/ /g, '+'); // an unescaped '+' arrives as a space
    else if (name === 'weights') weights = flag(value, name);
    else if (!OWN_PARAMS.has(name)) options[camelCase(name)] = paramValue(value);
  }
  const rows = rawRows.map((raw, i) => {
    const r = InteropRowSchema.safeParse(raw);
    const where = lines ? { line: lines[i]!, index: i } : { index: i };
    if (!r.success) {
      const first = r.error.issues[0];
      throw new RewardServerError('invalid_request', `row ${i}: ${issuesText(r.error.issues.slice(0, 5), raw)}`, { ...where, ...(first ? { field: first.path.map(String).join('.') } : {}) }, { cause: r.error });
    }
    return r.data;
  });
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
    if (err instanceof CoreError || err instanceof AdvantagesError) throw new RewardServerError('invalid_estimator', err.message, {}, { cause: err });
    // formatting a deeply nested option value for the message overflows the stack
    if (err instanceof RangeError) throw new RewardServerError('invalid_estimator', `estimator ${req.estimator}: options are not valid (${err.message})`, { field: 'options' }, { cause: err });
    throw err;
  }
  if (prepared.needs.length > 1) {
    throw new RewardServerError('invalid_estimator', `estimator ${req.estimator} needs ${prepared.needs.length} signals (${prepared.needs.join(', ')}); rows carry one ("saliency")`);
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
    if (err instanceof CoreError || err instanceof AdvantagesError) {
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
