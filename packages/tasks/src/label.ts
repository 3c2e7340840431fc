/**
 * The exact first-error labeller: given a problem's chain and any completion, which line first went
 * wrong and how, with that line's character span and (given the tokens) its token span.
 *
 * A completion is read line by line (blank lines skipped). A step line is `a op b = c` (`+ - * /`;
 * a number plain, `482`, or one digit at a time, `4 8 2`); an answer line holds `\boxed{...}`.
 * With the steps before it all right, the next line is compared with the next step, in this order:
 * - `missing_step`: it is a later step's line (the whole line, as the solution writes it, or that
 *   step's operation applied right to the current value): the next step was skipped; an answer
 *   before the last step also counts as one;
 * - `extra_step`: it repeats an earlier step's line, or it is a step line after the last step
 *   (or any line after the answer);
 * - otherwise its first wrong field, read left to right:
 *   `copy` (the value carried from the question or the previous line is not the current value, or
 *   the amount is not the question's: a number copied wrongly; also a boxed answer that is not the
 *   last result), `operation` (the wrong operator, or the amount of another step of the question),
 *   `arithmetic` (everything copied right, the result wrong);
 * - `no_answer`: the completion ends without a `\boxed{}` answer.
 * A line that is neither a step nor an answer, or an answer that is not an integer, makes the
 * completion `unlabelled` (with the line and the reason): never dropped, never guessed.
 */
import { chainValues } from './chain.js';
import type { Chain, ChainOperation } from './chain.js';
import { TaskError } from './errors.js';

export const ERROR_KINDS = ['copy', 'arithmetic', 'operation', 'missing_step', 'extra_step', 'no_answer'] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];
export type LabelKind = 'correct' | ErrorKind | 'unlabelled';

export interface FirstError {
  kind: LabelKind;
  /**
   * 0-based index of the first wrong line among the completion's lines (split at `\n`, blank ones
   * counted); for `no_answer` the index one past the last line; for `unlabelled` the line that
   * could not be read; -1 for `correct`.
   */
  line: number;
  /** which chain step that line should have been (0-based; `chain.steps.length` is the answer line); -1 for `correct` and `unlabelled` */
  step: number;
  /** the number of right step lines before it (the correct prefix): `chain.steps.length` for `correct` */
  correctSteps: number;
  /**
   * [start, end) in characters of that line in the text, without its line break and surrounding
   * blanks; for `no_answer` the empty span at the end of the text; null for `correct`
   */
  span: [number, number] | null;
  /** `unlabelled`: why the line could not be read */
  reason?: string;
}

type Parsed =
  | { type: 'step'; before: number; op: ChainOperation; operand: number; result: number }
  | { type: 'answer'; value: number }
  | { type: 'unreadable'; reason: string };

const OP_OF: Record<string, ChainOperation> = { '+': 'add', '-': 'sub', '*': 'mul', '/': 'div' };
const NUM = String.raw`\d+(?: \d+)*`;
const STEP_RE = new RegExp(String.raw`^(${NUM})\s*([-+*/])\s*(${NUM})\s*=\s*(-?\s?${NUM})$`);

const num = (text: string): number => Number(text.replace(/\s+/g, ''));

function parseLine(line: string): Parsed {
  const box = line.indexOf('\\boxed{');
  if (box >= 0) {
    const close = line.indexOf('}', box);
    const content = close < 0 ? null : line.slice(box + 7, close).trim();
    if (content === null || !/^-?\d+(?: \d+)*$/.test(content))
      return { type: 'unreadable', reason: `the answer ${JSON.stringify(line.slice(box))} is not \\boxed{integer}` };
    // digits with spaces in the box are graded as a product (`5 1 9` is 45), so they are never the answer
    return { type: 'answer', value: content.includes(' ') ? Number.NaN : Number(content) };
  }
  const m = STEP_RE.exec(line);
  if (m === null) return { type: 'unreadable', reason: `${JSON.stringify(line)} is neither a step "a op b = c" nor a \\boxed{} answer` };
  return { type: 'step', before: num(m[1]!), op: OP_OF[m[2]!]!, operand: num(m[3]!), result: num(m[4]!) };
}

/** Label a completion's text against a chain (see the module comment for the rules). */
export function labelCompletion(chain: Chain, text: string): FirstError {
  const values = chainValues(chain);
  const n = chain.steps.length;
  const shown = new Set([chain.start, ...chain.steps.map((s) => s.operand)]);
  const lines = text.split('\n');
  let k = 0; // right step lines so far
  let answered = false;
  let offset = 0;
  for (let li = 0; li < lines.length; offset += lines[li]!.length + 1, li++) {
    const raw = lines[li]!;
    const lead = raw.length - raw.trimStart().length;
    const line = raw.trim();
    if (line === '') continue;
    const span: [number, number] = [offset + lead, offset + lead + line.length];
    const at = (kind: LabelKind, step: number): FirstError => ({ kind, line: li, step, correctSteps: k, span });
    const p = parseLine(line);
    if (p.type === 'unreadable') return { ...at('unlabelled', -1), reason: p.reason };
    if (answered) return at('extra_step', n);
    if (p.type === 'answer') {
      if (k < n) return at('missing_step', k);
      if (p.value !== values[n]) return at('copy', n);
      answered = true;
      continue;
    }
    if (k >= n) return at('extra_step', n);
    const kind = stepError(chain, values, shown, k, p);
    if (kind !== undefined) return at(kind, k);
    k++;
  }
  if (answered) return { kind: 'correct', line: -1, step: -1, correctSteps: n, span: null };
  return { kind: 'no_answer', line: lines.length, step: k, correctSteps: k, span: [text.length, text.length] };
}

/** What is wrong with step line `p` where step `k` is due; undefined when it is right. */
function stepError(
  chain: Chain,
  values: number[],
  shown: Set<number>,
  k: number,
  p: { before: number; op: ChainOperation; operand: number; result: number },
): ErrorKind | undefined {
  const want = chain.steps[k]!;
  const value = values[k]!;
  const isLine = (j: number) => {
    const s = chain.steps[j]!;
    return p.before === values[j] && p.op === s.op && p.operand === s.operand && p.result === s.result;
  };
  if (isLine(k)) return undefined;
  for (let j = k + 1; j < chain.steps.length; j++) {
    const s = chain.steps[j]!;
    if (isLine(j)) return 'missing_step';
    const sameAsDue = s.op === want.op && s.operand === want.operand;
    if (!sameAsDue && p.before === value && p.op === s.op && p.operand === s.operand && p.result === apply(s.op, value, s.operand))
      return 'missing_step';
  }
  for (let j = 0; j < k; j++) if (isLine(j)) return 'extra_step';
  if (p.before !== value) return 'copy';
  if (p.op !== want.op) return 'operation';
  if (p.operand !== want.operand) return shown.has(p.operand) ? 'operation' : 'copy';
  return 'arithmetic';
}

function apply(op: ChainOperation, a: number, b: number): number {
  // exactness is not needed here: a skipped step is recognised only where its result is the one written
  return op === 'add' ? a + b : op === 'sub' ? a - b : op === 'mul' ? a * b : a / b;
}

/** The bytes of a token id, as a tokenizer decodes it (special tokens such as EOS: none). `@rlvr/policy`'s tokenizers and `@rlvr/rollout`'s `vocabFromJson` fit. */
export interface TokenBytesOf {
  tokenBytes(id: number): Uint8Array;
}

export interface TokenFirstError extends FirstError {
  /** the completion's text as its tokens decode, one character per byte (so that character offsets are byte offsets) */
  text: string;
  /**
   * [start, end) token indices (into the completion's tokens) of the first wrong line: every
   * token with a byte in the line's span (a token straddling the line break included); for
   * `no_answer`, the tokens without bytes at the very end (EOS), if any; null where `span` is null
   */
  tokens: [number, number] | null;
}

/**
 * Label a completion given as token ids, byte-exact: its text is the tokens' bytes one after another,
 * read one character per byte (a line with any non-ASCII byte is not a step line, so nothing is
 * lost), so the span is in bytes and the token span follows from each token's byte range.
 * `special`: token ids that decode to nothing here (EOS, padding), whatever `tokenBytes` says of
 * them (`@rlvr/policy`'s tokenizers give a special token its text, `<|endoftext|>`).
 */
export function labelTokens(
  chain: Chain,
  ids: ArrayLike<number>,
  vocab: TokenBytesOf,
  options: { special?: Iterable<number> } = {},
): TokenFirstError {
  const special = new Set(options.special ?? []);
  const none = new Uint8Array(0);
  const starts = new Int32Array(ids.length + 1);
  const pieces: string[] = [];
  for (let i = 0; i < ids.length; i++) {
    const bytes = special.has(ids[i]!) ? none : vocab.tokenBytes(ids[i]!);
    if (!(bytes instanceof Uint8Array)) throw new TaskError('invalid_tokens', `token ${ids[i]} (index ${i}) has no bytes`, { index: i });
    let piece = '';
    for (const b of bytes) piece += String.fromCharCode(b);
    pieces.push(piece);
    starts[i + 1] = starts[i]! + bytes.length;
  }
  const text = pieces.join('');
  const label = labelCompletion(chain, text);
  return { ...label, text, tokens: label.span === null ? null : tokenSpan(starts, label.span[0], label.span[1]) };
}

/** Token indices covering bytes [s, e) (`starts`: [T + 1] byte offsets); for s === e, the tokens without bytes at s (EOS). */
export function tokenSpan(starts: Int32Array, s: number, e: number): [number, number] {
  const T = starts.length - 1;
  let a = 0;
  if (s === e) {
    while (a < T && starts[a + 1]! <= s && !(starts[a] === s && starts[a + 1] === s)) a++;
    let b = a;
    while (b < T && starts[b] === s && starts[b + 1] === s) b++;
    return [a, b];
  }
  while (a < T && starts[a + 1]! <= s) a++; // the first token ending after s
  let b = a;
  while (b < T && starts[b]! < e) b++; // past the last token starting before e
  return [a, b];
}
