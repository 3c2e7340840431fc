/** The one options schema of the server; every field has a default, types are inferred from it. */
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { VerifyOptionsSchema } from '@rlvr/math-verify';
import { RewardServerError } from './errors.js';

export const RewardServerOptionsSchema = z
  .object({
    /** Interface to listen on. The default is loopback only: put a replica on the cluster network on purpose. */
    host: z.string().min(1).default('127.0.0.1'),
    /** TCP port; 0 picks a free one (read it back from `server.port`). */
    port: z.number().int().min(0).max(65_535).default(5000),
    /** Verifier worker threads (default: the machine's available parallelism). */
    concurrency: z.number().int().min(1).max(256).optional(),
    /** Wall-clock budget per completion, in ms; a completion past it gets reward 0 and `extra_logs.timeout = 1`. */
    timeoutMs: z.number().int().min(1).max(600_000).default(5_000),
    /** Largest request body, in bytes; larger ones are answered 413 without being buffered. */
    maxBodyBytes: z.number().int().min(1).default(64 * 1024 * 1024),
    /**
     * After a 413, up to this many further body bytes are read and discarded (never stored) so that clients which
     * send the whole body before reading the answer (Python `requests`, `urllib`) see the 413; past it the
     * connection is cut.
     */
    maxDiscardBytes: z.number().int().min(0).default(64 * 1024 * 1024),
    /**
     * When a query does not contain its prompt (a tokenizer round trip changed the prompt's text): grade the whole
     * query (`whole_query`, default; the last `\boxed{}` is read, so the completion's answer still wins) or give
     * reward 0 (`zero`). Either way `extra_logs.prompt_not_found` is 1 for that item.
     */
    onPromptMismatch: z.enum(['whole_query', 'zero']).default('whole_query'),
    /** Verifier options for every completion (`@rlvr/math-verify`'s `VerifyOptionsSchema`). */
    verify: VerifyOptionsSchema.prefault({}),
    /**
     * Requests handled at once (reading, grading, answering); one more gets 503 `overloaded` with `Retry-After: 1`
     * before its body is read. Bounds memory (at most this many bodies of up to `maxBodyBytes`).
     */
    maxInFlight: z.number().int().min(1).default(256),
    /** On `close()`, in-flight requests get this long to finish before their connections are cut (ms). */
    shutdownTimeoutMs: z.number().int().min(0).default(30_000),
    /** Heap limit of each verifier worker (MiB). */
    workerMemoryMb: z.number().int().min(32).max(65_536).default(1024),
  })
  .strict();

export type RewardServerOptions = z.infer<typeof RewardServerOptionsSchema>;
export type RewardServerOptionsInput = z.input<typeof RewardServerOptionsSchema>;

/** Validates options; throws `RewardServerError('invalid_options')` naming each bad field. */
export function resolveServerOptions(input: RewardServerOptionsInput = {}): RewardServerOptions {
  const r = RewardServerOptionsSchema.safeParse(input);
  if (!r.success) throw new RewardServerError('invalid_options', `invalid reward server options: ${formatZodIssues(r.error.issues, input)}`, {}, { cause: r.error });
  return r.data;
}
