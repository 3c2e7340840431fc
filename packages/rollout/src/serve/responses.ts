/**
 * Response bodies in vLLM's shapes: completion and chat choices, their log-probs, the chunks of
 * a stream, usage. Pure functions of the decoded rows, so the one-shot and the streamed responses
 * carry the same numbers.
 */
import type { PromptLogprobs } from '../samplers/prompt-logprobs.js';

/** How one token is written in log-probs: `"token_id:N"` (vLLM's `return_tokens_as_token_ids`) or its text. */
export type TokenName = (id: number) => string;

/** vLLM writes -inf log-probs (masked tokens) as -9999. */
const finite = (lp: number): number => Math.max(lp, -9999);

/** A completion's tokens as `/v1/completions` log-probs. */
export interface TokenLogprobs {
  tokens: readonly number[];
  logprobs: readonly (number | null)[];
  /** per position, the alternatives (`[id, logprob]`), or null (the first prompt token) */
  top: readonly (readonly [number, number][] | null)[];
}

/**
 * The `logprobs` object of a `/v1/completions` choice: `tokens`, `token_logprobs`, `text_offset`
 * (characters, counted as Python does: code points) and `top_logprobs` (the k alternatives and the
 * token itself, keyed by token string; null at the first prompt token).
 */
export function completionLogprobs(t: TokenLogprobs, name: TokenName, offsets: readonly number[]): Record<string, unknown> {
  const tokens = t.tokens.map(name);
  return {
    text_offset: offsets,
    token_logprobs: t.logprobs.map((x) => (x === null ? null : finite(x))),
    tokens,
    top_logprobs: t.top.map((alts, i) => {
      const lp = t.logprobs[i];
      if (alts === null || lp === null || lp === undefined) return null;
      const out: Record<string, number> = {};
      for (const [id, x] of alts) out[name(id)] = finite(x);
      out[tokens[i]!] = finite(lp);
      return out;
    }),
  };
}

/** The `logprobs.content` entries of a chat choice. */
export function chatLogprobs(t: TokenLogprobs, name: TokenName, bytesOf: (id: number) => Uint8Array): Record<string, unknown>[] {
  return t.tokens.map((id, i) => ({
    token: name(id),
    logprob: finite(t.logprobs[i] ?? 0),
    bytes: [...bytesOf(id)],
    top_logprobs: (t.top[i] ?? []).map(([alt, x]) => ({ token: name(alt), logprob: finite(x), bytes: [...bytesOf(alt)] })),
  }));
}

/** vLLM's `prompt_logprobs`: per prompt token, null first, then `{id: {logprob, rank, decoded_token}}` for the token and its alternatives. */
export function promptLogprobsField(ids: readonly number[], p: PromptLogprobs, name: TokenName): (Record<string, unknown> | null)[] {
  return ids.map((id, t) => {
    const lp = p.logprobs[t];
    if (lp === null || lp === undefined) return null;
    const alts = p.top[t] ?? [];
    const out: Record<string, unknown> = {};
    alts.forEach(([alt, x], r) => (out[String(alt)] = { logprob: finite(x), rank: r + 1, decoded_token: name(alt) }));
    if (!Object.hasOwn(out, String(id))) {
      const rank = 1 + alts.filter(([, x]) => x > lp).length;
      out[String(id)] = { logprob: finite(lp), rank, decoded_token: name(id) };
    }
    return out;
  });
}

/** Characters before each token of `tokens` in their decoded text, counted as code points (Python's `str` indices). */
export function textOffsets(tokens: readonly number[], bytesOf: (id: number) => Uint8Array, start = 0): number[] {
  const decoder = new TextDecoder();
  const out: number[] = [];
  let at = start;
  for (const id of tokens) {
    out.push(at);
    at += codePoints(decoder.decode(bytesOf(id), { stream: true }));
  }
  return out;
}

export function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= s.length) n++;
  }
  return n;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export const usage = (prompt: number, completion: number): Usage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});
