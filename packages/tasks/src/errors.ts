import { RlvrError } from '@rlvr/core';

/**
 * Every way `@rlvr/tasks` can fail. Closed union: callers may switch on it.
 * (Bad options fail earlier, with `@rlvr/core`'s `CoreError('invalid_config')`; JSONL files that cannot
 * be read with core's `read_failed`.)
 * - `invalid_row`: a dataset row lacks a field or has the wrong type, or its `chain` / `scaffold` is not one;
 * - `invalid_chain`: a chain given in code is not a valid chain (a step that does not give its result);
 * - `invalid_scaffold`: a scaffold leaks a sub-answer into its prompt, or does not fit its chain;
 * - `invalid_tokens`: the token ids given to the labeller do not decode to the text it labels.
 */
export type TaskErrorCode = 'invalid_row' | 'invalid_chain' | 'invalid_scaffold' | 'invalid_tokens';

/** The one error class of `@rlvr/tasks`. `code` is stable; `message` is for people; `location` is core's. */
export class TaskError extends RlvrError<TaskErrorCode> {
  override readonly name = 'TaskError';
}
