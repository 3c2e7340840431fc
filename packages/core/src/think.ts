/**
 * Think blocks of reasoning models: where a completion's final answer may be. The grader
 * (`@rlvr/math-verify`, its `thinkTags`) reads the answer from here, and the span locator
 * (`@rlvr/rollout`) looks for the answer's box here too, so a draft box inside a think block is
 * neither graded nor weighted.
 *
 * Like `findBoxes`, it works on a string (UTF-16 indices) or on UTF-8 bytes (byte offsets). A tag
 * is searched as its UTF-8 bytes in the latter; UTF-8 is self-synchronising, so a match in bytes is
 * a match in the decoded text and both give the same answer part.
 */

/** Think tags `[open, close]`: Qwen3 / DeepSeek-R1 `<think>`, and `<thinking>`. */
export type ThinkTags = readonly (readonly [open: string, close: string])[];

/** The think tags the grader and the span locator read by default. */
export const DEFAULT_THINK_TAGS: ThinkTags = [
  ['<think>', '</think>'],
  ['<thinking>', '</thinking>'],
];

/** An explicit answer tag after an open think block ends the reasoning there (NeMo-RL's `<think>...<answer>5</answer>`). */
const ANSWER_TAG = '<answer>';

type Text = string | Uint8Array;
const encoder = new TextEncoder();

/**
 * Where the part of `text` that holds the final answer starts, or -1 when there is none: just after
 * the last closing tag; 0 when no tag occurs (the whole text); and -1 when a think block opens after
 * the last closing tag and never closes (a trace cut off by the token limit: a box inside it is a
 * draft, not an answer), unless an `<answer>` follows that open tag, where the answer part then starts.
 * A completion that only closes the block (the chat template opened it) is read after the close.
 */
export function answerStart(text: Text, tags: ThinkTags): number {
  let closeEnd = -1;
  for (const [, close] of tags) {
    const i = lastIndexOf(text, close);
    if (i >= 0) closeEnd = Math.max(closeEnd, i + length(text, close));
  }
  let open = -1;
  for (const [start] of tags) {
    const i = lastIndexOf(text, start);
    if (i >= 0 && i >= closeEnd) open = Math.max(open, i);
  }
  if (open >= 0) return indexOf(text, ANSWER_TAG, open);
  return Math.max(closeEnd, 0);
}

/** Length of `needle` in the units of `text` (UTF-16 code units or UTF-8 bytes). */
const length = (text: Text, needle: string): number => (typeof text === 'string' ? needle.length : encoder.encode(needle).length);

function lastIndexOf(text: Text, needle: string): number {
  if (typeof text === 'string') return text.lastIndexOf(needle);
  const n = encoder.encode(needle);
  if (n.length === 0) return text.length;
  if (n.length > text.length) return -1;
  for (let i = text.lastIndexOf(n[0]!, text.length - n.length); i >= 0; i = i === 0 ? -1 : text.lastIndexOf(n[0]!, i - 1)) {
    if (startsAt(text, n, i)) return i;
  }
  return -1;
}

function indexOf(text: Text, needle: string, from: number): number {
  if (typeof text === 'string') return text.indexOf(needle, from);
  const n = encoder.encode(needle);
  if (n.length === 0) return from;
  for (let i = text.indexOf(n[0]!, from); i >= 0 && i + n.length <= text.length; i = text.indexOf(n[0]!, i + 1)) {
    if (startsAt(text, n, i)) return i;
  }
  return -1;
}

function startsAt(text: Uint8Array, needle: Uint8Array, at: number): boolean {
  if (at + needle.length > text.length) return false;
  for (let k = 0; k < needle.length; k++) if (text[at + k] !== needle[k]) return false;
  return true;
}
