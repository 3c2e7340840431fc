import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { loadTokenizer } from '@rlvr/policy';
import type { RolloutBatch } from '@rlvr/core';
import type { SaliencyBackend, SaliencyResult, defineBackend } from '@rlvr/saliency';
import { z } from 'zod';
import { PROCESS_STEPS } from './method.js';
import { arithmeticChecker, stepSignal } from './steps.js';

/** The embedded warm-up checkpoint of `rlvr train` (its tokenizer is the default). */
function embeddedCheckpoint(): string {
  return join(dirname(createRequire(import.meta.url).resolve('@rlvr/reference-trainer/package.json')), 'assets', 'warmup');
}

const ConfigSchema = z.strictObject({
  /** the policy's tokenizer (a `loadTokenizer` spec or model directory); default the embedded warm-up's */
  tokenizer: z.string().min(1).optional(),
});

/**
 * The `process-steps` signal backend: the exact arithmetic checker's steps of every completion, as
 * `process.steps` (`[B, 2K]`). It runs on the main thread and does not run the policy (the model is
 * not read); it decodes tokens with the policy's tokenizer (set `tokenizer` for another checkpoint).
 */
export function processStepsBackend(define: typeof defineBackend): SaliencyBackend {
  const tokenizers = new Map<string, ReturnType<typeof loadTokenizer>>();
  return define({
    name: 'process-steps',
    signal: PROCESS_STEPS,
    shape: 'rollout',
    configSchema: ConfigSchema,
    run(_model, batch: RolloutBatch, config): SaliencyResult {
      const spec = config.tokenizer ?? embeddedCheckpoint();
      const tok = tokenizers.get(spec) ?? loadTokenizer(spec);
      tokenizers.set(spec, tok);
      const o = batch.completionOffsets;
      const completions = Array.from({ length: batch.numRollouts }, (_, i) => ({
        tokenBytes: Array.from(batch.completionTokens.subarray(o[i]!, o[i + 1]!), (id) => tok.tokenBytes(id)),
      }));
      const { values, width } = stepSignal(arithmeticChecker.score(completions));
      return { signal: PROCESS_STEPS, scores: values, width, hasScores: new Uint8Array(batch.numRollouts).fill(1), missing: 0 };
    },
  });
}
