/** The one options schema of the server; every field has a default, types are inferred from it. */
import { z } from 'zod';
import { formatZodIssues } from '@rlvr/core';
import { VerifyOptionsSchema } from '@rlvr/math-verify';
import { RewardServerError } from './errors.js';

/** Worker heap an `/advantages` token may need, with room to spare: 4,194,304 tokens of GRAIL rows peaked under 256 MiB. */
const BYTES_PER_TOKEN = 96;

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
    maxBodyBytes: z
      .number()
      .int()
      .min(1)
      .default(64 * 1024 * 1024),
    /**
     * After a 413 (sent at once), the body is read on and discarded (never stored) while it is at most
     * `maxBodyBytes + maxDiscardBytes` long, so that clients which send the whole body before reading the answer
     * (Python's `urllib`) still read the 413; past that the connection is cut.
     */
    maxDiscardBytes: z
      .number()
      .int()
      .min(0)
      .default(64 * 1024 * 1024),
    /**
     * `/advantages`: most completion tokens (the sum of the rows' `length`) one request may ask for; more is a 413
     * `too_many_tokens`, refused before anything is allocated. Bounds a request's memory and time whatever its
     * body size (a row without saliency is a few bytes for any `length`).
     */
    maxAdvantageTokens: z
      .number()
      .int()
      .min(1)
      .max(2 ** 31 - 1)
      .default(4 * 1024 * 1024),
    /** `/advantages`: most completion tokens of one row; more is a 413 `too_many_tokens` naming the row. */
    maxRowTokens: z
      .number()
      .int()
      .min(1)
      .max(2 ** 31 - 1)
      .default(1024 * 1024),
    /**
     * Worker threads that run `/advantages` (parsing, estimation, the answer's JSON), so the event loop, and with it
     * `/health` and every other request, never waits on one (default: available parallelism, at most 4).
     */
    advantageWorkers: z.number().int().min(1).max(256).optional(),
    /**
     * When a query does not contain its prompt (a tokenizer round trip changed the prompt's text): grade the whole
     * query (`whole_query`, default; the last `\boxed{}` is read, so the completion's answer still wins) or give
     * reward 0 (`zero`). Either way `extra_logs.prompt_not_found` is 1 for that item.
     */
    onPromptMismatch: z.enum(['whole_query', 'zero']).default('whole_query'),
    /**
     * The problem statement each item is graded with (its unit, rounding, options; docs/grader-contract.md): the
     * request's `problems[i]` where given, else its prompt (`auto`, default; a chat-templated prompt is read from its
     * last user turn); only `problems` (`field`); or none (`off`: the completion and label alone, as before).
     */
    problem: z.enum(['auto', 'field', 'off']).default('auto'),
    /** Verifier options for every completion (`@rlvr/math-verify`'s `VerifyOptionsSchema`). */
    verify: VerifyOptionsSchema.prefault({}),
    /**
     * Requests handled at once once their body has arrived (grading, estimating, answering); one more gets 503
     * `overloaded` with `Retry-After: 1`, before its body is read when the limit is reached already. A request still
     * receiving its body is not in flight (see `maxReceiving`): slow clients cannot take these slots.
     */
    maxInFlight: z.number().int().min(1).default(256),
    /**
     * Bodies being received at once; one more request gets 503 `overloaded` before its body is read. With
     * `maxInFlight` it bounds memory: at most `maxInFlight + maxReceiving` bodies of up to `maxBodyBytes`.
     */
    maxReceiving: z.number().int().min(1).default(1024),
    /**
     * A request's whole body must arrive within this many ms of its headers; a client that stalls or trickles it
     * gets a 408 `body_timeout` and its connection is closed, so it holds a `maxReceiving` slot at most this long.
     */
    bodyTimeoutMs: z.number().int().min(1).max(3_600_000).default(60_000),
    /** On `close()`, in-flight requests get this long to finish before their connections are cut (ms). */
    shutdownTimeoutMs: z.number().int().min(0).default(30_000),
    /** Heap limit of each worker thread, verifier and `/advantages` alike (MiB): a blow-up kills that worker, not the server. */
    workerMemoryMb: z.number().int().min(32).max(65_536).default(1024),
  })
  .strict()
  .superRefine((o, ctx) => {
    // A worker's heap must hold a request at the token limit: its parsed rows and the answer's JSON. Below that a
    // worker may run out of memory, and a large allocation that fails then takes the whole process with it.
    const needMb = Math.ceil((o.maxAdvantageTokens * BYTES_PER_TOKEN) / 2 ** 20);
    if (o.workerMemoryMb < needMb) {
      ctx.addIssue({
        code: 'custom',
        path: ['workerMemoryMb'],
        message: `must be at least ${needMb} MiB for maxAdvantageTokens ${o.maxAdvantageTokens} (${BYTES_PER_TOKEN} bytes a token); raise it or lower maxAdvantageTokens`,
      });
    }
  });

export type RewardServerOptions = z.infer<typeof RewardServerOptionsSchema>;
export type RewardServerOptionsInput = z.input<typeof RewardServerOptionsSchema>;

/** Validates options; throws `RewardServerError('invalid_options')` naming each bad field. */
export function resolveServerOptions(input: RewardServerOptionsInput = {}): RewardServerOptions {
  const r = RewardServerOptionsSchema.safeParse(input);
  if (!r.success)
    throw new RewardServerError(
      'invalid_options',
      `invalid reward server options: ${formatZodIssues(r.error.issues, input)}`,
      {},
      { cause: r.error },
    );
  return r.data;
}
