/**
 * `POST /get_reward`: OpenRLHF's remote reward-model protocol. The body is
 * `{"query": string[], "prompts": string[], "labels": string[]}` (query = prompt + completion, label = gold answer),
 * plus rlvr's optional `problems` (the problem statement of each item, for clients whose prompt is not the question,
 * such as verl's `extra_info.problem`); the answer is `{"rewards": number[], "scores": number[], "extra_logs": {name: number[]}}`, item i for query i.
 */
import { setMaxListeners } from 'node:events';
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import type { RewardResult, VerifierPool } from '@rlvr/math-verify';
import { RewardServerError, preview } from './errors.js';
import type { RewardServerOptions } from './options.js';

/** Extra keys (OpenRLHF forks send more) are ignored; labels may be numbers (a numeric `--label_key` column). */
export const GetRewardRequestSchema = z.object({
  query: z.array(z.string()),
  prompts: z.array(z.string()).optional(),
  labels: z.array(z.union([z.string(), z.number().finite()])),
  problems: z.array(z.string().nullable()).optional(),
});
export type GetRewardRequest = z.output<typeof GetRewardRequestSchema>;

/** How a completion was cut out of its query. */
export type PromptMatch = 'prefix' | 'inside' | 'missing';

/**
 * The completion of `query`: the text after `prompt`. The query normally starts with the prompt (`prefix`); after a
 * tokenizer round trip it may carry left padding or a BOS token first, so the first occurrence is used (`inside`);
 * when the prompt is nowhere in the query (`missing`), the whole query is returned and the caller decides.
 */
export function completionOf(query: string, prompt: string): { completion: string; match: PromptMatch } {
  if (query.startsWith(prompt)) return { completion: query.slice(prompt.length), match: 'prefix' };
  const at = query.indexOf(prompt);
  if (at >= 0) return { completion: query.slice(at + prompt.length), match: 'inside' };
  return { completion: query, match: 'missing' };
}

/** Validates a parsed body: field types by zod, then the three lengths against each other. */
export function parseGetRewardRequest(body: unknown): GetRewardRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new RewardServerError(
      'invalid_request',
      `POST /get_reward takes a JSON object {"query": string[], "prompts": string[], "labels": string[]}, got ${Array.isArray(body) ? 'an array' : preview(body)}`,
    );
  }
  const r = GetRewardRequestSchema.safeParse(body);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new RewardServerError(
      'invalid_request',
      `POST /get_reward: ${formatZodIssues(r.error.issues.slice(0, 5))}`,
      first ? { field: first.path.map(String).join('.') } : {},
      { cause: r.error },
    );
  }
  const { query, prompts, labels } = r.data;
  if (labels.length !== query.length) {
    throw new RewardServerError(
      'length_mismatch',
      `query has ${query.length} entries but labels has ${labels.length}; item i of each belongs together`,
      { field: 'labels' },
    );
  }
  const { problems } = r.data;
  if (problems !== undefined && problems.length !== query.length) {
    throw new RewardServerError(
      'length_mismatch',
      `query has ${query.length} entries but problems has ${problems.length}; item i of each belongs together`,
      { field: 'problems' },
    );
  }
  if (prompts !== undefined && prompts.length !== query.length) {
    throw new RewardServerError(
      'length_mismatch',
      `query has ${query.length} entries but prompts has ${prompts.length}; item i of each belongs together`,
      { field: 'prompts' },
    );
  }
  return r.data;
}

/** The response body. `extra_logs` holds one 0/1 number per item (OpenRLHF concatenates and averages them). */
export interface GetRewardResponse {
  rewards: number[];
  scores: number[];
  extra_logs: {
    /** the verifier ran past `timeoutMs` (reward 0) */
    timeout: number[];
    /** no final answer was found in the completion */
    no_answer: number[];
    /** the query did not contain its prompt (see `onPromptMismatch`) */
    prompt_not_found: number[];
  };
  /** With `?details=1`: the verifier's reason per item. */
  reasons?: string[];
  /** With `?details=1`: the answer text taken from each completion (null when none). */
  extracted?: (string | null)[];
  /** With `?details=1`: the grader's bound each answer ran into (`size`, `depth`), null for none. */
  limits?: (string | null)[];
}

/** The problem statement item `i` is graded with under `opts.problem`, or null (empty text is none). */
function problemOf(req: GetRewardRequest, i: number, opts: RewardServerOptions): string | null {
  if (opts.problem === 'off') return null;
  const p = req.problems?.[i] ?? (opts.problem === 'auto' ? req.prompts?.[i] : undefined) ?? null;
  return p === null || p.length === 0 ? null : p;
}

/**
 * `pool.rewardBatch` once per distinct problem (OpenRLHF sends the G completions of a prompt together), each with
 * that problem in its options; results in input order. The calls share one signal, relayed from the request's.
 */
async function gradeByProblem(
  pool: VerifierPool,
  completions: string[],
  golds: string[],
  problems: (string | null)[],
  opts: RewardServerOptions,
  signal?: AbortSignal,
): Promise<RewardResult[]> {
  const groups = new Map<string | null, number[]>();
  problems.forEach((p, k) => {
    const g = groups.get(p);
    if (g === undefined) groups.set(p, [k]);
    else g.push(k);
  });
  let call = signal ? { signal } : {};
  if (signal !== undefined && groups.size > 1) {
    const relay = new AbortController();
    setMaxListeners(0, relay.signal);
    if (signal.aborted) relay.abort(signal.reason);
    else signal.addEventListener('abort', () => relay.abort(signal.reason), { once: true });
    call = { signal: relay.signal };
  }
  const out: RewardResult[] = new Array(completions.length);
  await Promise.all(
    [...groups].map(async ([problem, ks]) => {
      const verify = problem === null ? undefined : { ...opts.verify, problem };
      const rs = await pool.rewardBatch(
        ks.map((k) => completions[k] as string),
        ks.map((k) => golds[k] as string),
        verify,
        call,
      );
      ks.forEach((k, j) => (out[k] = rs[j] as RewardResult));
    }),
  );
  return out;
}

/**
 * Grades a validated request on the pool; results come back in request order. `signal` (the client went away)
 * cancels the batch on the pool: its items leave the queue, so later requests do not wait for them.
 */
export async function gradeRequest(
  req: GetRewardRequest,
  pool: VerifierPool,
  opts: RewardServerOptions,
  details: boolean,
  signal?: AbortSignal,
): Promise<GetRewardResponse> {
  const n = req.query.length;
  const completions: string[] = [];
  const golds: string[] = [];
  const missing: number[] = [];
  const toPool: number[] = [];
  const problems: (string | null)[] = [];
  for (let i = 0; i < n; i++) {
    const { completion, match } = completionOf(req.query[i]!, req.prompts?.[i] ?? '');
    missing.push(match === 'missing' ? 1 : 0);
    if (match === 'missing' && opts.onPromptMismatch === 'zero') continue;
    toPool.push(i);
    completions.push(completion);
    golds.push(String(req.labels[i]));
    problems.push(problemOf(req, i, opts));
  }
  const graded = await gradeByProblem(pool, completions, golds, problems, opts, signal);
  const results: RewardResult[] = new Array(n);
  for (let i = 0; i < n; i++) results[i] = { reward: 0, extracted: null, reason: 'prompt_not_found', answer: null };
  toPool.forEach((i, k) => (results[i] = graded[k]!));
  const rewards = results.map((r) => r.reward);
  const out: GetRewardResponse = {
    rewards,
    scores: rewards,
    extra_logs: {
      timeout: results.map((r) => (r.reason === 'timeout' ? 1 : 0)),
      no_answer: results.map((r) => (r.reason === 'no_answer' ? 1 : 0)),
      prompt_not_found: missing,
    },
  };
  if (details) {
    out.reasons = results.map((r) => r.reason);
    out.extracted = results.map((r) => r.extracted);
    out.limits = results.map((r) => r.limit ?? null);
  }
  return out;
}
