import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { RolloutBatch } from '@rlvr/core';
import { loadTokenizer, type Qwen3Model } from '@rlvr/policy';
import type { SaliencyBackend, SaliencyResult, defineBackend } from '@rlvr/saliency';
import { z } from 'zod';
import { ProcessScoreError } from './errors.js';
import { PROCESS_STEPS } from './method.js';
import { arithmeticChecker, stepSignal, type ProcessScorer, type StepCompletion } from './steps.js';
import { VllmPrmOptionsSchema, questionOf, vllmPrm } from './vllm-prm.js';

/** The embedded warm-up checkpoint of `rlvr train` (its tokenizer is the default). */
function embeddedCheckpoint(): string {
  return join(dirname(createRequire(import.meta.url).resolve('@rlvr/reference-trainer/package.json')), 'assets', 'warmup');
}

type VllmShape = typeof VllmPrmOptionsSchema.shape;
const VLLM_KEYS = Object.keys(VllmPrmOptionsSchema.shape) as (keyof VllmShape)[];
/** The vLLM options, each optional without its default (defaults come from `VllmPrmOptionsSchema` when the scorer is built). */
const vllmFields = Object.fromEntries(
  VLLM_KEYS.map((k) => {
    const s: z.ZodType = VllmPrmOptionsSchema.shape[k];
    return [k, (s instanceof z.ZodDefault ? (s.unwrap() as z.ZodType) : s).optional()];
  }),
) as { [K in keyof VllmShape]: z.ZodOptional<z.ZodType<z.output<VllmShape[K]>>> };

// flat, so every option is a dotted flag (`--saliency.process-steps.url URL`); the vLLM ones are checked by their schema
const ConfigSchema = z
  .strictObject({
    /** the policy's tokenizer (a `loadTokenizer` spec or model directory); default the embedded warm-up's */
    tokenizer: z.string().min(1).optional(),
    /** `arithmetic`: the exact checker of the synthetic task; `vllm`: a process reward model served by vLLM */
    scorer: z.enum(['arithmetic', 'vllm']).default('arithmetic'),
    ...vllmFields,
  })
  .superRefine((c, ctx) => {
    const given = VLLM_KEYS.filter((k) => c[k] !== undefined);
    if (c.scorer !== 'vllm') {
      for (const k of given) ctx.addIssue({ code: 'custom', path: [k], message: 'is an option of scorer "vllm" only' });
      return;
    }
    const r = VllmPrmOptionsSchema.safeParse(Object.fromEntries(given.map((k) => [k, c[k]])));
    if (!r.success) for (const issue of r.error.issues) ctx.addIssue({ ...issue, code: 'custom', message: issue.message });
  });
type Config = z.output<typeof ConfigSchema>;

function scorerOf(c: Config): ProcessScorer {
  if (c.scorer === 'arithmetic') return arithmeticChecker;
  return vllmPrm(
    Object.fromEntries(VLLM_KEYS.filter((k) => c[k] !== undefined).map((k) => [k, c[k]])) as z.input<typeof VllmPrmOptionsSchema>,
  );
}

/**
 * The `process-steps` signal backend: the steps of every completion as `process.steps` (`[B, 2K]`),
 * scored by the exact arithmetic checker (`scorer: 'arithmetic'`, the default) or by a process reward
 * model served by vLLM (`scorer: 'vllm'`, with `url`, `model` and `vllmPrm`'s other options; the
 * problem is the user turn of the decoded prompt, `questionOf`). It runs on the main thread (the
 * vLLM scorer through the asynchronous backend contract) and does not run the policy (the model
 * is not read but its vocabulary size); it decodes tokens with the policy's tokenizer (set `tokenizer` for another
 * checkpoint than the embedded warm-up: without it, a policy whose vocabulary differs is refused up front, and a token
 * id past the tokenizer's vocabulary names its rollout).
 */
export function processStepsBackend(define: typeof defineBackend): SaliencyBackend {
  const tokenizers = new Map<string, ReturnType<typeof loadTokenizer>>();
  return define({
    name: 'process-steps',
    signal: PROCESS_STEPS,
    shape: 'rollout',
    configSchema: ConfigSchema,
    // the steps' scores depend on the text only: a saliency.refresh neither re-checks nor re-asks the PRM
    readsParameters: false,
    async run(model, batch: RolloutBatch, config: Config): Promise<SaliencyResult> {
      const spec = config.tokenizer ?? embeddedCheckpoint();
      const tok = tokenizers.get(spec) ?? loadTokenizer(spec);
      tokenizers.set(spec, tok);
      const field = 'saliency.process-steps.tokenizer';
      const which = config.tokenizer === undefined ? `the default tokenizer (the embedded warm-up's, ${spec})` : `tokenizer ${spec}`;
      // the default only fits the embedded warm-up: another policy's ids would decode to other text, or fail
      const rows = (model as Partial<Qwen3Model>).config?.vocab_size;
      if (config.tokenizer === undefined && rows !== undefined && rows !== tok.vocabSize) {
        throw new ProcessScoreError(
          'tokenizer',
          `the policy has ${rows} vocabulary rows, ${which} ${tok.vocabSize} tokens: set it to the policy's checkpoint directory`,
          { field },
        );
      }
      const bytesOf = (ids: Int32Array, rollout: number, part: string) =>
        Array.from(ids, (id, t) => {
          if (id >= 0 && id < tok.vocabSize) return tok.tokenBytes(id);
          throw new ProcessScoreError(
            'tokenizer',
            `${part} token ${t} is id ${id}, past the ${tok.vocabSize} tokens of ${which}: set it to the policy's checkpoint directory`,
            { rollout, field },
          );
        });
      const { completionOffsets: o, promptOffsets: p } = batch;
      const completions = Array.from({ length: batch.numRollouts }, (_, i): StepCompletion => {
        const tokenBytes = bytesOf(batch.completionTokens.subarray(o[i]!, o[i + 1]!), i, 'completion');
        if (config.scorer === 'arithmetic') return { tokenBytes };
        const prompt = Buffer.concat(bytesOf(batch.promptTokens.subarray(p[i]!, p[i + 1]!), i, 'prompt')).toString('utf8');
        return { tokenBytes, question: questionOf(prompt) };
      });
      const { values, width } = stepSignal(await scorerOf(config).score(completions));
      return { signal: PROCESS_STEPS, scores: values, width, hasScores: new Uint8Array(batch.numRollouts).fill(1), missing: 0 };
    },
  });
}
