import { type Tiktoken, get_encoding } from '#tiktoken';
import type { TiktokenEncoding } from '#tiktoken';
import { PolicyError } from '../errors.js';

import { BUILTIN_ENCODINGS, baseRanks } from './ranks.js';
import type { BuiltinEncoding } from './ranks.js';

export { BUILTIN_ENCODINGS };
export type { BuiltinEncoding };

export interface EncodeOptions {
  /**
   * Whether special/added tokens written in the text (`<|im_end|>`) become their ids. Default true,
   * as Hugging Face tokenizers do; false encodes them as ordinary text (for untrusted input).
   */
  allowSpecial?: boolean;
  /** Refuse a longer text (UTF-16 code units) before any work; default `MAX_ENCODE_CHARS`. */
  maxChars?: number;
}

/** The longest text `encode` takes by default: 16 Mi characters (about 16 s of encoding on one core). */
export const MAX_ENCODE_CHARS = 2 ** 24;

/**
 * The longest run of one character class (letters and marks, digits, whitespace, other symbols)
 * `encode` takes. Byte-level BPE merges within a pre-tokenizer piece, at a cost quadratic in its
 * length, and a piece holds at most one run (and a character or two around it): a run of 16 Ki letters costs about 1 s, one of
 * 10^6 makes tiktoken's wasm abort ("unreachable") and leaves the encoder unusable.
 */
export const MAX_RUN_CHARS = 2 ** 14;

const LETTER = 0;
const DIGIT = 1;
const SPACE = 2;
const SYMBOL = 3;
const RUN_KIND = ['letters', 'digits', 'whitespace characters', 'symbols'] as const;
const ASCII_CLASS = Uint8Array.from({ length: 128 }, (_, c) => classOf(String.fromCharCode(c)));

function classOf(ch: string): number {
  if (/[\p{L}\p{M}]/u.test(ch)) return LETTER;
  if (/\p{N}/u.test(ch)) return DIGIT;
  if (/\s/u.test(ch)) return SPACE;
  return SYMBOL;
}

/** The first run of one character class longer than `limit`: `[start, length, class]`, or null. Linear, no allocation for ASCII. */
function longRun(text: string, limit: number): [number, number, number] | null {
  let start = 0;
  let cls = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let k: number;
    if (c < 128) k = ASCII_CLASS[c]!;
    else {
      const cp = text.codePointAt(i)!;
      k = classOf(String.fromCodePoint(cp));
      if (cp > 0xffff) i++;
    }
    if (k !== cls) {
      if (cls >= 0 && i - start > limit) return [start, i - start, cls];
      start = i;
      cls = k;
    }
  }
  return cls >= 0 && text.length - start > limit ? [start, text.length - start, cls] : null;
}

/**
 * Refuse, before any work, a text the encoder cannot take: over `maxChars`, or with a run of one
 * character class longer than `MAX_RUN_CHARS`. Throws `PolicyError('invalid_input')` saying which
 * limit and where, so that callers can name their file and line or request field.
 */
export function checkEncodable(text: string, maxChars = MAX_ENCODE_CHARS): void {
  if (text.length > maxChars) {
    throw new PolicyError('invalid_input', `text of ${text.length} characters is over the tokenizer's limit of ${maxChars} characters`);
  }
  if (text.length <= MAX_RUN_CHARS) return;
  const run = longRun(text, MAX_RUN_CHARS);
  if (run !== null) {
    const [at, length, cls] = run;
    throw new PolicyError(
      'invalid_input',
      `text has a run of ${length} ${RUN_KIND[cls]} at character ${at}, over the tokenizer's limit of ${MAX_RUN_CHARS} (byte-level BPE cost grows with the square of a run)`,
    );
  }
}

/** How a tokenizer was built; `describe()` returns it so a run can record it. */
export interface TokenizerInfo {
  kind: 'tiktoken' | 'hf' | 'pruned';
  name: string;
}

/**
 * A byte-level BPE tokenizer on tiktoken's encoder. Token ids are tiktoken ranks (for pruned
 * tokenizers, the compact ids of the pruned vocabulary). Call `free()` when done (wasm memory).
 */
export class Tokenizer {
  readonly info: TokenizerInfo;
  /** Special / added tokens by text. */
  readonly specialTokens: ReadonlyMap<string, number>;
  /**
   * Added tokens that decoded text keeps (Hugging Face `"special": false`, such as Qwen3's `<think>` and
   * `</think>`): `decode(skip_special_tokens=True)` and vLLM's completion text write them, the others it skips.
   */
  readonly textTokens: ReadonlySet<number>;
  /** Total ids: 1 + the largest id (ordinary or special). */
  readonly vocabSize: number;
  private readonly enc: Tiktoken;
  private readonly normalize: boolean;
  /** Token bytes by id (ordinary tokens as latin1 strings, then specials); undefined = unused id. */
  private readonly bytes: (Uint8Array | undefined)[];

  /**
   * @param enc          the tiktoken encoder (ranks = ids)
   * @param specialTokens special tokens by text (all added tokens; `options.textTokens` names those that text keeps)
   * @param bytesByRank  each ordinary token's bytes as a latin1 string, indexed by id; kept in JS so
   *                     that decoding never asks the wasm encoder about absent ids (its errors poison it)
   */
  constructor(
    enc: Tiktoken,
    specialTokens: Record<string, number>,
    bytesByRank: (string | undefined)[],
    info: TokenizerInfo,
    options: { nfc?: boolean; textTokens?: Iterable<number> } = {},
  ) {
    this.enc = enc;
    this.info = info;
    this.specialTokens = new Map(Object.entries(specialTokens));
    this.normalize = options.nfc ?? false;
    this.textTokens = new Set(options.textTokens ?? []);
    this.bytes = bytesByRank.map((b) => (b === undefined ? undefined : Uint8Array.from(b, (c) => c.charCodeAt(0))));
    const te = new TextEncoder();
    for (const [text, id] of this.specialTokens) this.bytes[id] = te.encode(text);
    this.vocabSize = this.bytes.length;
  }

  /** A built-in tiktoken encoding (`cl100k_base`, `o200k_base`, ...). */
  static builtin(name: BuiltinEncoding): Tokenizer {
    if (!(BUILTIN_ENCODINGS as readonly string[]).includes(name)) {
      throw new PolicyError('invalid_tokenizer', `unknown tiktoken encoding ${name} (known: ${BUILTIN_ENCODINGS.join(', ')})`);
    }
    const enc = get_encoding(name as TiktokenEncoding);
    return new Tokenizer(enc, builtinSpecials(name), baseRanks(name).bytesByRank, { kind: 'tiktoken', name });
  }

  /** Text -> ids. A text over the limits of `checkEncodable` throws `PolicyError('invalid_input')` before any work. */
  encode(text: string, options: EncodeOptions = {}): number[] {
    checkEncodable(text, options.maxChars);
    const t = this.normalize ? text.normalize('NFC') : text;
    const ids = options.allowSpecial === false ? this.enc.encode_ordinary(t) : this.enc.encode(t, 'all');
    return Array.from(ids);
  }

  /** The bytes of one token (special tokens: their UTF-8 text). */
  tokenBytes(id: number): Uint8Array {
    const b = Number.isInteger(id) && id >= 0 ? this.bytes[id] : undefined;
    if (!b) throw new PolicyError('invalid_input', `token id ${id} is not in the vocabulary (size ${this.vocabSize})`);
    return b;
  }

  /** ids -> the concatenated UTF-8 bytes of their tokens (exact; tokens may split a character). */
  decodeBytes(ids: ArrayLike<number>): Uint8Array {
    const parts = Array.from(ids, (id) => this.tokenBytes(id));
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }

  /** ids -> text (invalid UTF-8, e.g. a cut multi-byte character, becomes U+FFFD). */
  decode(ids: ArrayLike<number>): string {
    return new TextDecoder().decode(this.decodeBytes(ids));
  }

  /**
   * Byte offsets `[n + 1]` of each token in `decodeBytes(ids)`: token i covers bytes
   * `[offsets[i], offsets[i+1])`. Exact by construction (sums of token byte lengths).
   */
  offsets(ids: ArrayLike<number>): Int32Array {
    const out = new Int32Array(ids.length + 1);
    for (let i = 0; i < ids.length; i++) out[i + 1] = out[i] + this.tokenBytes(ids[i]).length;
    return out;
  }

  /** The id of a special token by its text, or undefined. */
  specialId(text: string): number | undefined {
    return this.specialTokens.get(text);
  }

  free(): void {
    this.enc.free();
  }
}

/**
 * Tokens `[ts, te)` that overlap the byte span `[s, e)` of the decoded text, given `offsets`
 * from `Tokenizer.offsets`. A token that straddles a span boundary is included (the span is
 * widened to whole tokens); an empty span maps to the empty range at the token containing `s`.
 */
export function byteSpanToTokens(offsets: Int32Array, s: number, e: number): [number, number] {
  const n = offsets.length - 1;
  if (s < 0 || e < s || e > offsets[n])
    throw new PolicyError('invalid_input', `byte span [${s}, ${e}) outside the text of ${offsets[n]} bytes`);
  // first token whose end > s
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (offsets[m + 1] > s) hi = m;
    else lo = m + 1;
  }
  const ts = lo;
  if (e === s) return [ts, ts];
  // first token whose start >= e
  lo = ts;
  hi = n;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (offsets[m] >= e) hi = m;
    else lo = m + 1;
  }
  return [ts, lo];
}

const utf8 = new TextEncoder();

/** UTF-8 byte offset of a UTF-16 index of `text` (to map a string search result into byte space). */
export function utf8Offset(text: string, index: number): number {
  return utf8.encode(text.slice(0, index)).length;
}

function builtinSpecials(name: BuiltinEncoding): Record<string, number> {
  switch (name) {
    case 'gpt2':
    case 'r50k_base':
      return { '<|endoftext|>': 50256 };
    case 'p50k_base':
      return { '<|endoftext|>': 50256 };
    case 'cl100k_base':
      return {
        '<|endoftext|>': 100257,
        '<|fim_prefix|>': 100258,
        '<|fim_middle|>': 100259,
        '<|fim_suffix|>': 100260,
        '<|endofprompt|>': 100276,
      };
    case 'o200k_base':
      return { '<|endoftext|>': 199999, '<|endofprompt|>': 200018 };
  }
}
