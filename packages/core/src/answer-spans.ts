/**
 * Answer spans in token space: where the final `\boxed{...}` of a completion sits among its tokens,
 * from the tokens' bytes, token strings, or ids with a Hugging Face `tokenizer.json`. No tokenizer
 * engine and no TensorFlow.js: a pipeline whose model lives elsewhere computes the spans GRAIL needs here.
 */
import { z } from 'zod';
import { FINISH_CODES, setSpans, type AnswerSpans, type RolloutBatch } from './batch.js';
import { answerBoxes, finalBoxUnclosed, findBoxes } from './boxes.js';
import { parseConfig } from './config.js';
import { CoreError } from './errors.js';
import { DEFAULT_THINK_TAGS, answerStart } from './think.js';

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
    /** Which answer: the last (what the reward grades) or the first (what the GRAIL reference code weights). */
    which: z.enum(['last', 'first']).default('last'),
    /** Box commands, without the backslash (core's `findBoxes`, as the grader reads them). */
    commands: z
      .array(z.string().regex(/^[A-Za-z]+$/, { message: 'a box command is letters only, without the backslash' }))
      .min(1)
      .default(['boxed', 'fbox']),
    /** `\boxed 5` (no braces) is a box of one token, as the grader reads it. */
    bare: z.boolean().default(true),
    /**
     * Think blocks `[open, close]`, the grader's `thinkTags` (same default): boxes are looked for only after the
     * last closing tag, and a block that opens and never closes (unless an `<answer>` follows it) gives no span.
     * `[]` reads the whole completion.
     */
    thinkTags: z
      .array(z.tuple([z.string().min(1), z.string().min(1)]))
      .default(() => DEFAULT_THINK_TAGS.map(([open, close]): [string, string] => [open, close])),
  })
  .strict();
export type SpanOptions = z.output<typeof SpanOptionsSchema>;
export type SpanOptionsInput = z.input<typeof SpanOptionsSchema>;

/** The bytes of `tokens` one after another: the exact UTF-8 of their text (special tokens: none). */
export function tokensBytes(tokens: ArrayLike<number>, vocab: TokenBytes): Uint8Array {
  const pieces: Uint8Array[] = new Array(tokens.length);
  let total = 0;
  for (let i = 0; i < tokens.length; i++) {
    pieces[i] = vocab.tokenBytes(tokens[i]!);
    total += pieces[i]!.length;
  }
  const out = new Uint8Array(total);
  for (let i = 0, at = 0; i < pieces.length; at += pieces[i]!.length, i++) out.set(pieces[i]!, at);
  return out;
}

/** Options parsed once, for calling the locator in a loop. */
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
 * The answer is found in the bytes of the concatenated token pieces (never by re-encoding text),
 * by the rules the grader (`@rlvr/math-verify`, `extract` = `which`) reads its answer with, all
 * from `@rlvr/core`: `answerStart` (only the text after the last closing think tag; a think block
 * that never closes: no span, the grader's `unclosed_reasoning`), `finalBoxUnclosed` (a final
 * `\boxed{` cut off: no span, the grader's `unclosed_box`, rather than an earlier closed box), then
 * `findBoxes` and `answerBoxes`. So with `which: 'last'` the weighted box is the rewarded one, and
 * a draft box inside a think block is never the answer. An answer of adjacent boxes
 * (`\boxed{1}, \boxed{2}`) is covered from the first marker to the last closing brace. Its bytes
 * split into three regions: the marker O = `\boxed{`, the content C, the closing brace K = `}`
 * (empty for a bare `\boxed 5`). Tokens are assigned by this rule:
 * - **open** = the tokens that overlap O (from the first to the last of them);
 * - **close** = the tokens that overlap K and do not overlap O (for an empty K: the token holding
 *   the last content byte when it runs past it);
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
  const find = { commands: opts.commands, bare: opts.bare };
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
    // The grader's reading: the answer part after the think blocks (none: a trace cut off inside one), no answer when
    // its final box is cut off, else the first or last answer of its boxes.
    const at = answerStart(bytes, opts.thinkTags);
    if (at < 0) return null;
    const part = bytes.subarray(at);
    if (finalBoxUnclosed(part, opts.which, find)) return null;
    const boxes = findBoxes(part, find);
    const answer = answerBoxes(part, boxes, opts.which);
    if (answer === null) return null;
    const a = boxes[answer.first]!;
    const b = boxes[answer.last]!;
    return assignTokens(ends, at + a.start, at + a.contentStart, at + b.contentEnd, at + b.end);
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
 * The final `\boxed{...}` of a completion in token space (after its think blocks), or null when
 * it has no answer the grader would read. See `spanLocator` for the straddling rule; build a locator once
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
 * Token ranges from byte regions: marker O = [o, c), content C = [c, k), close K = [k, e) (one
 * brace, or empty). `ends[i]` is the byte offset after token i; token i covers [ends[i-1], ends[i]).
 */
function assignTokens(ends: Int32Array, o: number, c: number, k: number, e: number): AnswerSpans {
  // first token that ends after byte o: it holds byte o, the first of O
  const openStart = firstEndingAfter(ends, o);
  // the token holding byte c - 1 (the last of O) is the last open token
  const openEnd = firstEndingAfter(ends, c - 1) + 1;
  if (e > k) {
    // the token holding byte k (the `}`), unless it is already in open
    const kTok = firstEndingAfter(ends, k);
    return {
      open: [openStart, openEnd],
      content: [openEnd, Math.max(kTok, openEnd)],
      close: [Math.max(kTok, openEnd), Math.max(kTok + 1, openEnd)],
    };
  }
  // no brace: the token holding the last content byte closes when it runs past the content
  const last = k > c ? firstEndingAfter(ends, k - 1) : openEnd - 1;
  const closeStart = last >= openEnd && ends[last]! > k ? last : Math.max(last + 1, openEnd);
  return { open: [openStart, openEnd], content: [openEnd, closeStart], close: [closeStart, Math.max(last + 1, openEnd)] };
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

/**
 * The byte pieces of a completion's tokens given as strings: `text` = each token's decoded text
 * (its UTF-8; a token holding part of a multi-byte character decodes to U+FFFD, which moves no box);
 * `byte-level` = byte-level BPE token strings as `tokenizer.json` and Hugging Face's
 * `convert_ids_to_tokens` write them (`Ġ` for a space, GPT-2's byte-to-unicode table: Qwen, Llama 3,
 * GPT-2), read back to their exact bytes. Feed them to `spanLocator().fromPieces`.
 */
export function tokenPieces(tokens: readonly string[], encoding: 'text' | 'byte-level'): Uint8Array[] {
  const utf8 = new TextEncoder();
  if (encoding === 'text') return tokens.map((t) => utf8.encode(t));
  const table = byteLevelTable();
  return tokens.map((t, i) => {
    const out = new Uint8Array(t.length);
    let n = 0;
    for (const ch of t) {
      const b = table.get(ch);
      if (b === undefined)
        throw new CoreError('invalid_row', `token ${i} (${JSON.stringify(t)}): ${JSON.stringify(ch)} is not a byte-level BPE character`, {
          field: `tokens[${i}]`,
        });
      out[n++] = b;
    }
    return out.subarray(0, n);
  });
}

/**
 * The `TokenBytes` of a Hugging Face `tokenizer.json` (parsed) with a byte-level BPE model (Qwen,
 * Llama 3, GPT-2): each id of `model.vocab` to its bytes; `added_tokens` marked special decode to
 * nothing (as when a completion is decoded skipping special tokens), others to their text. An id
 * the file lacks, or a file of another kind, is a `CoreError` naming it (`source`: the file's name).
 */
export function tokenizerJsonBytes(json: unknown, source = 'tokenizer.json'): TokenBytes & { readonly size: number } {
  const file = json as { model?: { vocab?: unknown }; added_tokens?: unknown };
  const vocab = file?.model?.vocab;
  if (vocab === null || typeof vocab !== 'object' || Array.isArray(vocab))
    throw new CoreError('invalid_config', 'not a byte-level BPE tokenizer.json: no model.vocab object of token -> id', {
      file: source,
      field: 'model.vocab',
    });
  const strings = new Map<number, string>();
  for (const [token, id] of Object.entries(vocab)) if (typeof id === 'number') strings.set(id, token);
  const table = new Map<number, Uint8Array>();
  const utf8 = new TextEncoder();
  for (const t of Array.isArray(file.added_tokens) ? (file.added_tokens as { id?: unknown; content?: unknown; special?: unknown }[]) : [])
    if (typeof t.id === 'number' && typeof t.content === 'string')
      table.set(t.id, t.special === true ? new Uint8Array(0) : utf8.encode(t.content));
  return {
    size: new Set([...strings.keys(), ...table.keys()]).size,
    tokenBytes(id: number): Uint8Array {
      let b = table.get(id);
      if (b === undefined) {
        const s = strings.get(id);
        if (s === undefined) throw new CoreError('invalid_row', `token id ${id} is not in ${source}`, { file: source });
        b = tokenPieces([s], 'byte-level')[0]!;
        table.set(id, b);
      }
      return b;
    },
  };
}

let byteLevel: Map<string, number> | undefined;

/** GPT-2's byte-to-unicode table, inverted: the printable bytes stand for themselves, the others for U+0100 upwards. */
function byteLevelTable(): Map<string, number> {
  if (byteLevel !== undefined) return byteLevel;
  const table = new Map<string, number>();
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table.set(String.fromCharCode(printable ? b : next++), b);
  }
  byteLevel = table;
  return table;
}
