import { z } from 'zod';
import {
  AnswerSpansSchema,
  SPAN_STRIDE,
  assertWritable,
  choiceFlag,
  formatLocation,
  formatZodIssues,
  readJsonl,
  setSpans,
  usageError,
  writeFileAtomic,
  type Command,
  type CommandContext,
  type RolloutBatch,
} from '@rlvr/core';
import { BACKEND_NAMES, loadModel, selectBackend } from '@rlvr/policy';
import type { SaliencyBackend } from './backend.js';
import { SaliencyError } from './errors.js';
import { computeSaliency, saliencyBackends } from './registry.js';

/** The backends `--method` offers: every registered one that runs the policy. */
export function methods(): string[] {
  return saliencyBackends.names().filter((n) => saliencyBackends.get(n).needsModel);
}

/** The option keys of a backend's schema (its strict object's keys). */
function optionKeys(b: SaliencyBackend): string[] {
  return b.configSchema instanceof z.ZodObject ? Object.keys(b.configSchema.shape) : [];
}

/** Flags that set a backend option: flag -> [option key, how to read the value]. */
const OPTION_FLAGS: Record<string, [string, (raw: string) => unknown]> = {
  'answer-span': ['answerSpan', String],
  alignment: ['alignment', String],
  temperature: ['temperature', Number],
  'token-budget': ['tokenBudget', Number],
  'pad-id': ['padId', Number],
  'noise-std': ['noiseStd', Number],
  seed: ['seed', Number],
  replacement: ['replacement', (r) => (r === 'zero' ? 'zero' : /^\d+$/.test(r) ? Number(r) : r)],
  window: ['window', Number],
};

function usage(): string {
  return `usage: rlvr-saliency --model DIR --method ${methods().join('|')} --in FILE.jsonl [--out FILE] [options]

Raw per-token attribution scores of a policy (GRAIL, OAR-G, perturbation, or a registered backend).

Input rows: {"prompt": number[], "completion": number[], "spans": {"open": [s, e], "content": [s, e], "close": [s, e]} | null}
  (token ranges in the completion, half-open; other keys are kept for --format advantages)
Output, one line per row, in order:
  --format scores (default)  {"scores": number[] | null}   (null: the row has no answer span)
  --format advantages        {"group", "reward", "length", "saliency", "spans"}: the rows of
                             rlvr-advantages (input rows must carry group and reward; rows without
                             scores get zeros, which the estimators never read: no answer -> weight 1)

options (every method):
  --answer-span boxed|content   tokens of the answer loss (default boxed: the whole \\boxed{...})
  --alignment previous|own      position a score is read from (default previous; perturbation: own)
  --temperature T               divide the logits by T (default 1)
  --token-budget N              most padded tokens per forward pass (default 8192)
  --pad-id N                    token id of padding columns (default 0)
  --options JSON                any option of the method's backend, as a JSON object (the flags win)
  --backend B                   auto | ${BACKEND_NAMES.join(' | ')} (default: $RLVR_TFJS_BACKEND, else auto)
noisy-kl:      --noise-std S (default 1e-3)  --seed N (default 0)
perturbation:  --replacement zero|ID (default zero)  --window N (default: every token)
Exit codes: 0 ok, 1 bad input or model, 2 bad usage.`;
}

const TokenIds = z.array(z.number().int().nonnegative());
const InputRowSchema = z.looseObject({
  prompt: TokenIds,
  completion: TokenIds,
  spans: AnswerSpansSchema.nullable().default(null),
  group: z.union([z.string(), z.number()]).optional(),
  reward: z.number().optional(),
});
type InputRow = z.output<typeof InputRowSchema>;

/** Read JSONL rows; errors name the file and line. Returns the rows and the line of each. */
async function readInput(file: string): Promise<{ rows: InputRow[]; lines: number[] }> {
  const rows: InputRow[] = [];
  const lines: number[] = [];
  for await (const { line, value } of readJsonl(file)) {
    const r = InputRowSchema.safeParse(value);
    if (!r.success) throw new SaliencyError('invalid_input', formatZodIssues(r.error.issues, value), { file, line });
    if (r.data.spans && r.data.spans.close[1] > r.data.completion.length) {
      throw new SaliencyError(
        'invalid_input',
        `close span ends at ${r.data.spans.close[1]} but the completion has ${r.data.completion.length} tokens`,
        { file, line, field: 'spans' },
      );
    }
    rows.push(r.data);
    lines.push(line);
  }
  return { rows, lines };
}

/** The columnar batch of the rows (groups and rewards are not needed for scores). */
function batchOf(rows: InputRow[]): RolloutBatch {
  const n = rows.length;
  const b: RolloutBatch = {
    numRollouts: n,
    groupIndex: new Int32Array(n),
    promptTokens: Int32Array.from(rows.flatMap((r) => r.prompt)),
    promptOffsets: new Int32Array(n + 1),
    completionTokens: Int32Array.from(rows.flatMap((r) => r.completion)),
    completionOffsets: new Int32Array(n + 1),
    rewards: new Float32Array(n),
    finish: new Uint8Array(n),
    spans: new Int32Array(n * SPAN_STRIDE),
  };
  rows.forEach((r, i) => {
    b.promptOffsets[i + 1] = b.promptOffsets[i]! + r.prompt.length;
    b.completionOffsets[i + 1] = b.completionOffsets[i]! + r.completion.length;
    setSpans(b.spans, i, r.spans);
  });
  return b;
}

/** The shortest decimal that reads back as the same float32. */
export function float32Text(v: number): string {
  if (v === 0) return '0';
  for (let p = 1; p <= 9; p++) {
    const s = Number(v.toPrecision(p));
    if (Math.fround(s) === v) return String(s);
  }
  return String(v);
}

/** The backend options the flags (and `--options`) give, checked against the method's schema. */
function optionsOf(ctx: CommandContext, method: string): Record<string, unknown> {
  const backend = saliencyBackends.get(method);
  let config: Record<string, unknown> = {};
  const json = ctx.values.options;
  if (typeof json === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch (e) {
      throw usageError(`not valid JSON: ${(e as Error).message}`, 'options');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw usageError('must be a JSON object of options', 'options');
    config = { ...(parsed as Record<string, unknown>) };
  }
  const keys = optionKeys(backend);
  for (const [flag, [key, read]] of Object.entries(OPTION_FLAGS)) {
    const raw = ctx.values[flag];
    if (typeof raw !== 'string') continue;
    if (!keys.includes(key)) {
      const others = methods().filter((m) => optionKeys(saliencyBackends.get(m)).includes(key));
      throw usageError(`applies to --method ${others.join(' or ')} only`, flag);
    }
    config[key] = read(raw);
  }
  try {
    backend.parseConfig(config);
  } catch (e) {
    // A bad value of a flag is a usage error; name the flag rather than the option key.
    const msg = (e as Error).message.replace(/^invalid saliency backend \S+ configuration: /, '');
    const flag = Object.entries(OPTION_FLAGS).find(([f, [key]]) => typeof ctx.values[f] === 'string' && msg.startsWith(`${key}:`))?.[0];
    throw usageError(flag === undefined ? msg : msg.slice(msg.indexOf(':') + 2), flag ?? 'options');
  }
  return config;
}

/** `rlvr-saliency`: raw per-token scores of a policy for rows of token ids. */
export const saliencyCommand: Command = {
  summary: 'raw per-token attribution scores of a policy (GRAIL, OAR-G, perturbation)',
  get usage() {
    return usage();
  },
  options: {
    model: { type: 'string' },
    method: { type: 'string' },
    in: { type: 'string' },
    out: { type: 'string' },
    format: { type: 'string' },
    options: { type: 'string' },
    backend: { type: 'string' },
    ...Object.fromEntries(Object.keys(OPTION_FLAGS).map((f) => [f, { type: 'string' as const }])),
  },
  async run(ctx) {
    const { values } = ctx;
    if (typeof values.model !== 'string') throw usageError('required (a model directory)', 'model');
    if (typeof values.in !== 'string') throw usageError('required (a JSON-lines file of rows)', 'in');
    const method = choiceFlag(values, 'method', methods());
    if (method === undefined) throw usageError(`required: one of ${methods().join(', ')}`, 'method');
    const format = choiceFlag(values, 'format', ['scores', 'advantages'] as const) ?? 'scores';
    const backend = choiceFlag(values, 'backend', ['auto', ...BACKEND_NAMES] as const) ?? 'auto';
    const config = optionsOf(ctx, method);
    const file = values.in;
    if (typeof values.out === 'string') await assertWritable(values.out);
    const { rows, lines } = await readInput(file);
    if (format === 'advantages') {
      rows.forEach((r, i) => {
        if (r.group === undefined || r.reward === undefined) {
          throw new SaliencyError('invalid_input', '--format advantages needs "group" and "reward" on every row', {
            file,
            line: lines[i],
            field: r.group === undefined ? 'group' : 'reward',
          });
        }
      });
    }
    await selectBackend({ backend }, { info: (m) => ctx.io.stderr.write(m + '\n') });
    const model = loadModel(values.model, { trainable: false });
    let result;
    try {
      // checked before any forward pass, so the error names the line rather than a rollout of the batch
      const context = model.config.max_position_embeddings;
      rows.forEach((r, i) => {
        const total = r.prompt.length + r.completion.length;
        if (total > context) {
          throw new SaliencyError(
            'invalid_input',
            `prompt and completion are ${total} tokens, more than the model's context of ${context} (max_position_embeddings)`,
            { file, line: lines[i], field: 'completion' },
          );
        }
      });
      result = (await computeSaliency(method, model, batchOf(rows), config)).result;
    } catch (e) {
      // A rollout error names the rollout index; say which line of the input it came from.
      if (e instanceof SaliencyError && e.location.rollout !== undefined) {
        const { rollout, ...rest } = e.location;
        throw new SaliencyError(
          e.code,
          e.message.slice(formatLocation(e.location).length),
          { ...rest, file, line: lines[rollout] },
          { cause: e },
        );
      }
      throw e;
    } finally {
      model.dispose();
    }
    let off = 0;
    const out = rows.map((r, i) => {
      const len = r.completion.length;
      const s = Array.from(result.scores.subarray(off, off + len), float32Text);
      off += len;
      const scores = result.hasScores[i] ? `[${s.join(',')}]` : 'null';
      if (format === 'scores') return `{"scores":${scores}}\n`;
      return `{"group":${JSON.stringify(r.group)},"reward":${JSON.stringify(r.reward)},"length":${len},"saliency":[${s.join(',')}],"spans":${JSON.stringify(r.spans)}}\n`;
    });
    if (result.missing > 0)
      ctx.io.stderr.write(`${ctx.prog}: ${result.missing} of ${rows.length} rows have no answer span and no scores\n`);
    if (typeof values.out === 'string') await writeFileAtomic(values.out, out.join(''));
    else ctx.io.stdout.write(out.join(''));
  },
};
