/**
 * A process reward model served by vLLM, as a `ProcessScorer`.
 *
 * The protocol followed (vLLM's docs and code, read through public copies):
 * - `POST /pooling` with `{"model", "input": text}` (examples/online_serving/openai_pooling_client.py,
 *   vllm/entrypoints/openai/serving_pooling.py), answered by
 *   `{"object": "list", "data": [{"index": 0, "object": "pooling", "data": ...}], "usage": ...}`;
 *   an error is a non-2xx status with a JSON body (`{"object": "error", "message", ...}` or
 *   `{"error": {"message", ...}}` by version).
 * - `Qwen2ForProcessRewardModel` (vllm/model_executor/models/qwen2_rm.py, with the STEP pooler
 *   of PR #9697): 2 labels, softmax, `step_tag_id` 151651 (`<extra_0>`), so `data` holds one
 *   `[p_neg, p_pos]` row per step tag in the input, in order. Since vLLM 0.11.1 (PRs #25370, #25524)
 *   `/pooling` takes a pooling task per request, the PRM's being `token_classify` (option `task`).
 * - The input, as the Qwen2.5-Math-PRM-7B model card builds it: the steps (a completion split on
 *   blank lines) each followed by `<extra_0>`, as the assistant turn of a chat with the system prompt
 *   below and the problem as the user turn; the step's score is p_pos.
 */
import { z } from 'zod';
import { ProcessScoreError } from './errors.js';
import { completionBytes, stepsFromCuts, type ProcessScorer, type ProcessStep, type StepCompletion } from './steps.js';

/** The system prompt of the Qwen2.5-Math-PRM model card. */
export const QWEN_PRM_SYSTEM = 'Please reason step by step, and put your final answer within \\boxed{}.';

/** Qwen's chat template as the model card applies it (no generation prompt): `{system}`, `{question}`, `{steps}` are filled in. */
export const QWEN_PRM_TEMPLATE =
  '<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n{steps}<|im_end|>\n';

export const VllmPrmOptionsSchema = z.strictObject({
  /** the server's base URL (`http://host:8000`); the client posts to `{url}/pooling` */
  url: z.url({ protocol: /^https?$/ }),
  /** the served model name (`--served-model-name`, else the model path) */
  model: z.string().min(1),
  /** what separates steps in a completion's text (the model card: a blank line) */
  separator: z.string().min(1).default('\n\n'),
  /** the step tag appended to every step (its token is the pooler's `step_tag_id`) */
  stepTag: z.string().min(1).default('<extra_0>'),
  /** the system prompt put in `{system}` */
  system: z.string().default(QWEN_PRM_SYSTEM),
  /** the PRM's input: `{system}`, `{question}` and `{steps}` (each step then `stepTag`, concatenated) are filled in */
  template: z
    .string()
    .refine((t) => t.includes('{steps}'), 'must contain {steps}')
    .default(QWEN_PRM_TEMPLATE),
  /** sent as the request's `task` when set (vLLM >= 0.11 pooling tasks: `token_classify` for a PRM) */
  task: z.string().min(1).optional(),
  /** the column of a step's row that is its score (`[p_neg, p_pos]`: 1) */
  positive: z.number().int().min(0).default(1),
  /** ms for one request, answer body included; past it the scoring fails with a `timeout` error */
  timeoutMs: z.number().int().positive().default(60_000),
  /** requests in flight at once */
  concurrency: z.number().int().positive().default(8),
});
export type VllmPrmOptions = z.input<typeof VllmPrmOptionsSchema>;

/** A completion's steps: each step's text (separator excluded) and its cut, the byte after its separator (after its text for the last). */
export function segmentSteps(bytes: Buffer, separator: string): { text: string; cut: number }[] {
  const sep = Buffer.from(separator, 'utf8');
  const steps: { text: string; cut: number }[] = [];
  let start = 0;
  while (start < bytes.length) {
    const at = bytes.indexOf(sep, start);
    const end = at < 0 ? bytes.length : at;
    const text = bytes.subarray(start, end).toString('utf8');
    // blank pieces (separators in a row, trailing whitespace) are no step: their bytes join the next step
    if (text.trim() !== '') steps.push({ text, cut: at < 0 ? end : end + sep.length });
    start = at < 0 ? bytes.length : end + sep.length;
  }
  return steps;
}

/** The PRM input for one completion: `template` with its placeholders filled (in one pass, so text holding `{steps}` stays as it is). */
export function prmInput(
  options: { template: string; system: string; stepTag: string },
  question: string,
  steps: readonly string[],
): string {
  const values: Record<string, string> = {
    system: options.system,
    question,
    steps: steps.map((s) => s + options.stepTag).join(''),
  };
  return options.template.replace(/\{(system|question|steps)\}/g, (_, k: string) => values[k]!);
}

/**
 * The problem text in a decoded prompt: the last user turn of ChatML (`<|im_start|>user ... <|im_end|>`)
 * or of rlvr's plain template (`User: ...` up to `\n\nAssistant:`), else the whole prompt, trimmed.
 */
export function questionOf(prompt: string): string {
  const chatml = [...prompt.matchAll(/<\|im_start\|>user\n([\s\S]*?)<\|im_end\|>/g)].at(-1);
  if (chatml) return chatml[1]!.trim();
  const plain = [...prompt.matchAll(/(?:^|\n\n)User: ([\s\S]*?)(?=\n\n(?:Assistant|User|System):|$)/g)].at(-1);
  return (plain ? plain[1]! : prompt).trim();
}

const EXCERPT = 300;
const excerpt = (body: string) => (body.length > EXCERPT ? `${body.slice(0, EXCERPT)}...` : body);

/** `vllmPrm`'s scorer: always a promise. */
export interface VllmPrmScorer extends ProcessScorer {
  score(completions: readonly StepCompletion[]): Promise<ProcessStep[][]>;
}

/**
 * A `ProcessScorer` asking a vLLM-served PRM: each completion is cut into steps at `separator`,
 * sent as one `/pooling` request (at most `concurrency` at once, each bounded by `timeoutMs`), and
 * step k's score (`row[positive]` of the k-th row) lands on its token span through `stepsFromCuts`
 * (byte-exact: a cut inside a token moves to its end). A completion without a step sends nothing.
 * Any failure rejects the whole call with a `ProcessScoreError` naming the rollout (its index in
 * `completions`) and aborts the requests still in flight.
 */
export function vllmPrm(input: VllmPrmOptions): VllmPrmScorer {
  const o = VllmPrmOptionsSchema.parse(input);
  const endpoint = `${o.url.replace(/\/+$/, '')}/pooling`;

  async function request(rollout: number, text: string, nSteps: number, stop: AbortSignal): Promise<number[]> {
    const body = JSON.stringify({ model: o.model, input: text, ...(o.task === undefined ? {} : { task: o.task }) });
    const signal = AbortSignal.any([stop, AbortSignal.timeout(o.timeoutMs)]);
    let status: number;
    let raw: string;
    try {
      const res = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal });
      status = res.status;
      raw = await res.text(); // the same signal bounds the body
    } catch (cause) {
      if (stop.aborted) throw stop.reason;
      const timedOut = (cause as Error).name === 'TimeoutError';
      throw new ProcessScoreError(
        timedOut ? 'timeout' : 'network',
        timedOut
          ? `no full answer from ${endpoint} within ${o.timeoutMs} ms (timeoutMs)`
          : `no answer from ${endpoint}: ${(cause as Error).message}${(cause as { cause?: Error }).cause ? ` (${(cause as { cause: Error }).cause.message})` : ''}`,
        { rollout },
        { cause },
      );
    }
    if (status < 200 || status >= 300)
      throw new ProcessScoreError('http', `${endpoint} answered HTTP ${status}: ${excerpt(raw)}`, { rollout });
    const rows = poolingRows(raw, o.positive, rollout, endpoint);
    if (rows.length !== nSteps)
      throw new ProcessScoreError(
        'step_count',
        `${endpoint} scored ${rows.length} steps but the request has ${nSteps} (a step tag ${JSON.stringify(o.stepTag)} in the text, or a server whose step_tag_id is not that tag's token?)`,
        { rollout, field: 'data' },
      );
    return rows;
  }

  return {
    name: 'vllm',
    async score(completions) {
      const plans = completions.map((c) => {
        const steps = segmentSteps(completionBytes(c), o.separator);
        return {
          steps,
          text: prmInput(
            o,
            c.question ?? '',
            steps.map((s) => s.text),
          ),
        };
      });
      const scores: number[][] = plans.map(() => []);
      const stop = new AbortController();
      let next = 0;
      const lane = async () => {
        while (next < plans.length && !stop.signal.aborted) {
          const i = next++;
          const { steps, text } = plans[i]!;
          if (steps.length > 0) scores[i] = await request(i, text, steps.length, stop.signal);
        }
      };
      const lanes = Array.from({ length: Math.min(o.concurrency, plans.length) }, () =>
        lane().catch((e: unknown) => {
          stop.abort(e); // the first failure ends the others' requests too
          throw e;
        }),
      );
      const settled = await Promise.allSettled(lanes);
      if (stop.signal.aborted) throw stop.signal.reason;
      for (const s of settled) if (s.status === 'rejected') throw s.reason;
      return completions.map((c, i) =>
        stepsFromCuts(
          c,
          plans[i]!.steps.map((s) => s.cut),
          scores[i]!,
        ),
      );
    },
  };
}

/** The score column of every row of a `/pooling` answer for one input; anything else is a `bad_response` error. */
function poolingRows(raw: string, positive: number, rollout: number, endpoint: string): number[] {
  const bad = (what: string, field: string) =>
    new ProcessScoreError('bad_response', `${endpoint} answered ${what}: ${excerpt(raw)}`, { rollout, field });
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw bad('a body that is not JSON', 'body');
  }
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length !== 1) throw bad('no data array of one item', 'data');
  const rows = (data[0] as { data?: unknown } | null)?.data;
  if (!Array.isArray(rows)) throw bad('no data[0].data (per-step rows)', 'data.0.data');
  return rows.map((row: unknown, k) => {
    const v = Array.isArray(row) ? row[positive] : undefined;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(`step ${k} without a finite column ${positive}`, `data.0.data.${k}`);
    return v;
  });
}
