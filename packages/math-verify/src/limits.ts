/**
 * Which of the grader's bounds an answer ran into, so that a reward of 0 for a too-large or too-deep answer is
 * flagged rather than silent (an answer over a limit may still equal the gold): `size` for an answer or gold over
 * `maxAnswerChars`, `depth` for one nested deeper than the parser's `MAX_PARSE_DEPTH` (120 levels).
 */
export type Limit = 'size' | 'depth';

/** The limit a verdict's reason reports, or null. */
function limitOf(reason: string): Limit | null {
  if (reason === 'answer_too_large' || reason === 'gold_too_large') return 'size';
  if (reason.endsWith('nesting too deep')) return 'depth';
  return null;
}

/** `r` with `limit` set when its reason reports one (the object unchanged otherwise). */
export function flagLimit<T extends { reason: string; limit?: Limit }>(r: T): T {
  const limit = limitOf(r.reason);
  return limit === null ? r : { ...r, limit };
}
