/**
 * Finding `\boxed{...}` in UTF-8 bytes. Everything here works on bytes, so that
 * token byte offsets (tokens may split a multi-byte character) map onto it exactly.
 * The delimiters are ASCII, hence never inside a multi-byte character.
 */

/** A balanced box in a byte string: `[start, contentStart)` is the marker (`\boxed{`), `[contentStart, contentEnd)` the answer, `contentEnd` the closing `}`. */
export interface ByteBox {
  start: number;
  contentStart: number;
  contentEnd: number;
}

/** The markers recognised by default: `\boxed{` and `\fbox{`. */
export const DEFAULT_BOX_MARKERS: readonly string[] = ['\\boxed{', '\\fbox{'];

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const BACKSLASH = 0x5c;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: false });

/** UTF-8 bytes of each marker (computed once per marker set). */
export function encodeMarkers(markers: readonly string[]): Uint8Array[] {
  return markers.map((m) => encoder.encode(m));
}

/**
 * All top-level balanced boxes, left to right, as a regex `findall` with a recursive
 * brace pattern would see them: after a balanced box the scan resumes after its
 * closing brace (so `\boxed{\boxed{1}}` is one box, the outer one); an unbalanced
 * occurrence (end of text before its braces balance) is skipped and the scan resumes
 * right after its marker.
 *
 * The depth walk counts `{` and `}`. With `escapes` (default), a backslash makes the
 * next byte literal, as in LaTeX: `\{` and `\}` are literal braces, and `\\}` is a
 * line break followed by a closing brace.
 */
export function findBoxes(bytes: Uint8Array, markers: readonly Uint8Array[], escapes = true): ByteBox[] {
  const boxes: ByteBox[] = [];
  let i = 0;
  while (i < bytes.length) {
    const m = markerAt(bytes, i, markers);
    if (m === 0) {
      i++;
      continue;
    }
    const contentStart = i + m;
    const close = matchingClose(bytes, contentStart, escapes);
    if (close < 0) {
      i = contentStart; // unbalanced: skip this occurrence, keep scanning inside it
      continue;
    }
    boxes.push({ start: i, contentStart, contentEnd: close });
    i = close + 1;
  }
  return boxes;
}

/** The first or last balanced box, or null. */
export function pickBox(boxes: readonly ByteBox[], which: 'first' | 'last'): ByteBox | null {
  if (boxes.length === 0) return null;
  return which === 'first' ? boxes[0]! : boxes[boxes.length - 1]!;
}

/**
 * The content of the last (or first) balanced `\boxed{...}` / `\fbox{...}` of a text,
 * or null. Used for golds given as worked solutions (Minerva-MATH).
 */
export function boxedContent(text: string, which: 'first' | 'last' = 'last', markers: readonly string[] = DEFAULT_BOX_MARKERS): string | null {
  const bytes = encoder.encode(text);
  const box = pickBox(findBoxes(bytes, encodeMarkers(markers)), which);
  return box === null ? null : decoder.decode(bytes.subarray(box.contentStart, box.contentEnd));
}

/** Length of the marker that starts at i, or 0. Markers must end in `{`. */
function markerAt(bytes: Uint8Array, i: number, markers: readonly Uint8Array[]): number {
  for (const m of markers) {
    if (i + m.length > bytes.length) continue;
    let k = 0;
    while (k < m.length && bytes[i + k] === m[k]) k++;
    if (k === m.length) return m.length;
  }
  return 0;
}

/** Index of the `}` that brings the depth (1 at `from`) back to 0, or -1. */
function matchingClose(bytes: Uint8Array, from: number, escapes: boolean): number {
  let depth = 1;
  for (let j = from; j < bytes.length; j++) {
    const b = bytes[j];
    if (escapes && b === BACKSLASH) {
      j++;
      continue;
    }
    if (b === OPEN) depth++;
    else if (b === CLOSE && --depth === 0) return j;
  }
  return -1;
}
