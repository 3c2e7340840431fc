import { z } from 'zod';
import { FINISH_CODES, parseConfig, setSpans, type AnswerSpans, type RolloutBatch } from '@rlvr/core';
import { DEFAULT_BOX_MARKERS, encodeMarkers, findBoxes, pickBox } from './boxes.js';

/**
 * Where a tokenizer's token ids come from as bytes: the exact UTF-8 bytes that
 * token contributes to the decoded text (a piece of a multi-byte character is fine).
 * Special tokens that decoding skips (EOS, padding) return an empty array.
 * `@rlvr/policy`'s tokenizers and `vocabFromJson` implement it.
 */
export interface TokenBytes {
  tokenBytes(id: number): Uint8Array;
}

export const SpanOptionsSchema = z
  .object({
    /** Which balanced box is the answer: the last one (what the reward grades) or the first (what the GRAIL reference code weights). */
    which: z.enum(['last', 'first']).default('last'),
    /** Opening delimiters, each ending in `{`. */
    markers: z
      .array(z.string().min(2).refine((m) => m.endsWith('{'), { message: 'a marker must end with "{"' }))
      .min(1)
      .default([...DEFAULT_BOX_MARKERS]),
    /** A backslash makes the next byte literal in the brace walk (`\{`, `\}`, `\\`), as in LaTeX. */
    escapes: z.boolean().default(true),
  })
  .strict();
export type SpanOptions = z.output<typeof SpanOptionsSchema>;
export type SpanOptionsInput = z.input<typeof SpanOptionsSchema>;

/** Options parsed once, with the markers encoded, for calling the locator in a loop. */
export interface SpanLocator {
  readonly options: SpanOptions;
  /** Spans of a completion given as its tokens' byte pieces. */
  fromPieces(pieces: readonly Uint8Array[]): AnswerSpans | null;
  /** Spans of a completion given as token ids and a byte source. */
  fromTokens(tokens: ArrayLike<number>, vocab: TokenBytes): AnswerSpans | null;
}

/**
 * Build a span locator: bad options throw `CoreError('invalid_config')` here, once.
 *
 * The box is found in the bytes of the concatenated token pieces (never by
 * re-encoding text). Its bytes split into three regions: the marker O = `\boxed{`,
 * the content C, the closing brace K = `}`. Tokens are assigned by this rule:
 * - **open** = the tokens that overlap O (from the first to the last of them);
 * - **close** = the tokens that overlap K and do not overlap O;
 * - **content** = the tokens strictly between open and close.
 *
 * So a token straddling a delimiter and the content belongs to the delimiter: one
 * straddling O and C is open, one straddling C and K is close, and a token holding
 * all of `{x}` is open (content and close are then empty ranges at its end). A token
 * may also carry bytes from before the box (in open) or after it (in close).
 * Consequences, all tested: the ranges are ordered and do not overlap; open covers
 * O; open + content + close covers the whole box; every content token's bytes lie
 * inside C; the first post-answer token is `close[1]`. Empty pieces (special tokens)
 * sit at their byte position: inside O they are open, at either edge of C they are
 * content, before the box or after K they belong to no range.
 */
export function spanLocator(options: SpanOptionsInput = {}): SpanLocator {
  const opts = parseConfig(SpanOptionsSchema, options, 'answer span');
  const markers = encodeMarkers(opts.markers);
  const fromPieces = (pieces: readonly Uint8Array[]): AnswerSpans | null => {
    // ends[i] = byte offset just after token i
    const ends = new Int32Array(pieces.length);
    let total = 0;
    for (let i = 0; i < pieces.length; i++) {
      total += pieces[i]!.length;
      ends[i] = total;
    }
    const bytes = new Uint8Array(total);
    for (let i = 0, at = 0; i < pieces.length; i++) {
      bytes.set(pieces[i]!, at);
      at = ends[i]!;
    }
    const box = pickBox(findBoxes(bytes, markers, opts.escapes), opts.which);
    if (box === null) return null;
    return assignTokens(ends, box.start, box.contentStart, box.contentEnd);
  };
  return {
    options: opts,
    fromPieces,
    fromTokens(tokens, vocab) {
      const pieces: Uint8Array[] = new Array(tokens.length);
      for (let i = 0; i < tokens.length; i++) pieces[i] = vocab.tokenBytes(tokens[i]!);
      return fromPieces(pieces);
    },
  };
}

/**
 * The final `\boxed{...}` of a completion in token space, or null when it has no
 * balanced box. See `spanLocator` for the straddling rule; build a locator once
 * when calling this in a loop.
 */
export function locateAnswerSpans(tokens: ArrayLike<number>, vocab: TokenBytes, options: SpanOptionsInput = {}): AnswerSpans | null {
  return spanLocator(options).fromTokens(tokens, vocab);
}

/**
 * Locate the answer spans of every rollout of a batch in place (rollouts with
 * finish `error` get none) and return how many have one. For batches built
 * elsewhere, or to switch between the first and the last box.
 */
export function fillBatchSpans(batch: RolloutBatch, vocab: TokenBytes, options: SpanOptionsInput = {}): number {
  const locator = spanLocator(options);
  let found = 0;
  for (let i = 0; i < batch.numRollouts; i++) {
    const tokens = batch.completionTokens.subarray(batch.completionOffsets[i]!, batch.completionOffsets[i + 1]!);
    const spans = batch.finish[i] === FINISH_CODES.error ? null : locator.fromTokens(tokens, vocab);
    setSpans(batch.spans, i, spans);
    if (spans !== null) found++;
  }
  return found;
}

/**
 * Token ranges from byte regions: marker O = [o, c), content C = [c, k), close K = [k, k + 1).
 * `ends[i]` is the byte offset after token i; token i covers [ends[i-1], ends[i]).
 */
function assignTokens(ends: Int32Array, o: number, c: number, k: number): AnswerSpans {
  // first token that ends after byte o: it holds byte o, the first of O
  const openStart = firstEndingAfter(ends, o);
  // the token holding byte c - 1 (the last of O) is the last open token
  const openEnd = firstEndingAfter(ends, c - 1) + 1;
  // the token holding byte k (the `}`), unless it is already in open
  const kTok = firstEndingAfter(ends, k);
  const closeStart = Math.max(kTok, openEnd);
  const closeEnd = Math.max(kTok + 1, openEnd);
  return { open: [openStart, openEnd], content: [openEnd, closeStart], close: [closeStart, closeEnd] };
}

/** Smallest i with ends[i] > byte (ends is non-decreasing); the token holding that byte. */
function firstEndingAfter(ends: Int32Array, byte: number): number {
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ends[mid]! > byte) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
