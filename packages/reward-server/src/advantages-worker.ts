/**
 * The worker thread of `POST /advantages` (run by piscina, see `advantages-pool.ts`): the body's bytes in, the
 * answer's bytes out. Parsing, estimation and the answer's JSON all happen here, off the server's event loop.
 */
import { type AdvantageLimits, answerAdvantages } from './advantages-route.js';

export interface AdvantagesTask {
  /** the request body (UTF-8), transferred to the worker */
  body: Uint8Array;
  /** the query string, without `?` */
  query: string;
  limits: AdvantageLimits;
}

export interface AdvantagesTaskResult {
  status: number;
  /** the JSON answer (UTF-8) */
  body: Uint8Array;
  internal?: { message: string; stack?: string };
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

export default function run(task: AdvantagesTask): AdvantagesTaskResult {
  const answer = answerAdvantages(decoder.decode(task.body), task.query, task.limits);
  return { status: answer.status, body: encoder.encode(answer.json), ...(answer.internal ? { internal: answer.internal } : {}) };
}
