import type { Rng } from '@rlvr/core';

/**
 * Choosing the next token from one row of logits `[V]`, on the host in float64: greedy,
 * temperature, top-k, top-p (nucleus) and min-p, with the behaviour log-prob of the chosen token.
 *
 * The log-prob is log-softmax(logits / T) of the chosen token over the WHOLE vocabulary
 * (T = 1 when greedy), before top-k / top-p truncation: the quantity a trainer recomputes with
 * `tokenLogprobs(hidden, W, targets, { temperature: T })`, so the importance ratio of the first
 * PPO step is exactly 1 up to float error. (vLLM reports raw, T = 1 log-probs by default; pass
 * the same convention to both sides when mixing samplers.)
 */

export interface TokenChoice {
  /** params of one row: temperature 0 = greedy; topK 0 = off; topP 1 = off; minP 0 (or absent) = off */
  temperature: number;
  topK: number;
  topP: number;
  /** keep the tokens at least `minP` times as likely as the most likely one (after top-k and top-p, as vLLM) */
  minP?: number;
}

export interface Picked {
  id: number;
  logprob: number;
}

/**
 * Pick the next token from `logits` (one row, any array of length V). `rng` is used once per
 * call when sampling (never when greedy), so a row's draws depend only on its own seed.
 */
export function pickToken(logits: ArrayLike<number>, p: TokenChoice, rng: Rng): Picked {
  const V = logits.length;
  const greedy = p.temperature === 0;
  const invT = greedy ? 1 : 1 / p.temperature;
  let max = -Infinity;
  let argmax = 0;
  for (let v = 0; v < V; v++) {
    const x = logits[v]!;
    if (x > max) {
      max = x;
      argmax = v;
    }
  }
  // log Z of the temperature-scaled logits (shifted by the max for stability)
  let z = 0;
  for (let v = 0; v < V; v++) z += Math.exp((logits[v]! - max) * invT);
  const logZ = Math.log(z);
  const logprob = (id: number): number => (logits[id]! - max) * invT - logZ;
  if (greedy) return { id: argmax, logprob: logprob(argmax) };

  const useK = p.topK > 0 && p.topK < V;
  const useP = p.topP < 1;
  const minP = p.minP ?? 0;
  if (!useK && !useP && minP > 0) {
    // min-p alone: the kept ids are those of weight >= minP (the most likely one weighs 1), in id order
    const w = (v: number): number => Math.exp((logits[v]! - max) * invT);
    let total = 0;
    for (let v = 0; v < V; v++) if (w(v) >= minP) total += w(v);
    let u = rng.float() * total;
    for (let v = 0; v < V; v++) {
      const x = w(v);
      if (x < minP) continue;
      u -= x;
      if (u < 0) return { id: v, logprob: logprob(v) };
    }
    return { id: argmax, logprob: logprob(argmax) };
  }
  if (!useK && !useP) {
    // inverse CDF over the whole vocabulary
    let u = rng.float() * z;
    for (let v = 0; v < V; v++) {
      u -= Math.exp((logits[v]! - max) * invT);
      if (u < 0) return { id: v, logprob: logprob(v) };
    }
    return { id: argmax, logprob: logprob(argmax) }; // u landed on the rounding remainder
  }
  // Candidates sorted by probability (desc), ties by id (asc): top-k first, then the nucleus of
  // the renormalised top-k distribution (as vLLM applies them), always keeping the first.
  let ids = useK ? sortedCandidates(logits, p.topK) : nucleusCandidates(logits, max, invT, z, p.topP);
  const w = ids.map((id) => Math.exp((logits[id]! - max) * invT));
  let keep = ids.length;
  if (useP) {
    const mass = useK ? w.reduce((s, x) => s + x, 0) : z; // top-p of the renormalised top-k, or of everything
    let cum = 0;
    keep = 0;
    while (keep < ids.length) {
      cum += w[keep]!;
      keep++;
      if (cum >= p.topP * mass) break;
    }
  }
  // min-p: the candidates are sorted by weight, the first weighs 1
  while (minP > 0 && keep > 1 && w[keep - 1]! < minP) keep--;
  ids = ids.slice(0, keep);
  let total = 0;
  for (let i = 0; i < keep; i++) total += w[i]!;
  let u = rng.float() * total;
  for (let i = 0; i < keep; i++) {
    u -= w[i]!;
    if (u < 0) return { id: ids[i]!, logprob: logprob(ids[i]!) };
  }
  return { id: ids[keep - 1]!, logprob: logprob(ids[keep - 1]!) };
}

/**
 * The `k` most likely ids with their log-softmax(logits / T) over the whole row (T = 1 when
 * `temperature` is 0), most likely first, ties by id: the `top_logprobs` of the OpenAI protocol.
 */
export function topLogprobs(logits: ArrayLike<number>, k: number, temperature: number): [number, number][] {
  if (k <= 0) return [];
  const lp = logSoftmaxAt(logits, temperature);
  return sortedCandidates(logits, Math.min(k, logits.length)).map((id) => [id, lp(id)]);
}

/** `id -> log-softmax(logits / T)[id]` over the whole row (T = 1 when `temperature` is 0), normalised once. */
export function logSoftmaxAt(logits: ArrayLike<number>, temperature: number): (id: number) => number {
  const invT = temperature === 0 ? 1 : 1 / temperature;
  let max = -Infinity;
  for (let v = 0; v < logits.length; v++) if (logits[v]! > max) max = logits[v]!;
  let z = 0;
  for (let v = 0; v < logits.length; v++) z += Math.exp((logits[v]! - max) * invT);
  const logZ = Math.log(z);
  return (id) => (logits[id]! - max) * invT - logZ;
}

/**
 * Every id that can be in the top-p nucleus, sorted like `sortedCandidates`, without sorting the
 * whole vocabulary: the ids of weight >= tau = (1 - p) Z / V hold more than p Z between them
 * (the others hold less than V tau), so the sorted prefix reaching p Z never leaves them.
 */
function nucleusCandidates(logits: ArrayLike<number>, max: number, invT: number, z: number, topP: number): number[] {
  const V = logits.length;
  const tau = ((1 - topP) * z) / V;
  const ids: number[] = [];
  for (let v = 0; v < V; v++) if (Math.exp((logits[v]! - max) * invT) >= tau) ids.push(v);
  return ids.sort((a, b) => logits[b]! - logits[a]! || a - b);
}

/** The `k` ids of largest logit, sorted by logit descending, ties by id ascending. */
function sortedCandidates(logits: ArrayLike<number>, k: number): number[] {
  const V = logits.length;
  const order = (a: number, b: number) => logits[b]! - logits[a]! || a - b;
  if (k >= V / 4) {
    const all = Array.from({ length: V }, (_, i) => i);
    all.sort(order);
    return all.slice(0, k);
  }
  // a small k: keep a sorted buffer of the best k seen so far
  const best: number[] = [];
  for (let v = 0; v < V; v++) {
    if (best.length === k && order(v, best[k - 1]!) >= 0) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (order(best[m]!, v) <= 0) lo = m + 1;
      else hi = m;
    }
    best.splice(lo, 0, v);
    if (best.length > k) best.pop();
  }
  return best;
}
