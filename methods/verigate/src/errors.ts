import { RlvrError } from '@rlvr/core';

/**
 * Every way a process-score source can fail. `http`: the server answered with an error status;
 * `bad_response`: its body is not the pooling response the client expects; `step_count`: it scored
 * another number of steps than the client sent; `timeout`: no full answer within the timeout;
 * `network`: no answer at all (refused, reset); `tokenizer`: the tokenizer that decodes the completions is not
 * the policy's (a token id past its vocabulary).
 */
export type ProcessScoreErrorCode = 'http' | 'bad_response' | 'step_count' | 'timeout' | 'network' | 'tokenizer';

/** The error of a process-score source: a stable `code`, core's `location` (the rollout index, the field) before the message. */
export class ProcessScoreError extends RlvrError<ProcessScoreErrorCode> {
  override readonly name = 'ProcessScoreError';
}
