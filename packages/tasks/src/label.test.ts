import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Tokenizer } from '@rlvr/policy/tokenizer';
import { applyExact, chainValues, formatNumber, OPERATION_SYMBOLS } from './chain.js';
import type { Chain, ChainOperation } from './chain.js';
import { TaskError } from './errors.js';
import { labelCompletion, labelTokens, tokenSpan } from './label.js';
import type { ErrorKind } from './label.js';
import { longChainGenerator } from './long-chain.js';
import { syntheticGenerator } from './synthetic.js';

const OPS: ChainOperation[] = ['add', 'sub', 'mul', 'div'];

/** A step line written field by field (the test's own writer, not the package's). */
const line = (before: number, op: ChainOperation, operand: number, result: number, spaced: boolean) => {
  const f = (n: number) => formatNumber(n, spaced);
  return `${f(before)} ${OPERATION_SYMBOLS[op]} ${f(operand)} = ${f(result)}`;
};

/** The correct solution's lines of a chain: n step lines and the boxed answer. */
function correctLines(chain: Chain, spaced: boolean): string[] {
  const v = chainValues(chain);
  return [...chain.steps.map((s, i) => line(v[i]!, s.op, s.operand, s.result, spaced)), `\\boxed{${v.at(-1)}}`];
}

type Corruption = { kind: ErrorKind; line: number; step: number; lines: string[] };

/** True when `text` is, field for field, the correct line of a step other than `i` (the corruption would be a skipped or repeated step). */
function isOtherStepLine(chain: Chain, i: number, fields: [number, ChainOperation, number, number]): boolean {
  const v = chainValues(chain);
  return chain.steps.some((s, j) => {
    if (j === i) return false;
    const whole = fields[0] === v[j] && fields[1] === s.op && fields[2] === s.operand && fields[3] === s.result;
    // a later step's operation applied right to the current value also reads as a skip
    const skip =
      j > i && fields[0] === v[i] && fields[1] === s.op && fields[2] === s.operand && fields[3] === applyExact(s.op, v[i]!, s.operand);
    return whole || skip;
  });
}

/** One corruption of step `i` of a correct solution, or undefined where it would be ambiguous. */
function corrupt(chain: Chain, spaced: boolean, what: number, i: number, delta: number, pick: number): Corruption | undefined {
  const lines = correctLines(chain, spaced);
  const v = chainValues(chain);
  const n = chain.steps.length;
  const s = chain.steps[i]!;
  const shown = [chain.start, ...chain.steps.map((x) => x.operand)];
  const fields = (b: number, op: ChainOperation, o: number, r: number): string[] | undefined => {
    // the line format writes no signs on the carried value and the amount
    if (b <= 0 || o <= 0 || isOtherStepLine(chain, i, [b, op, o, r])) return undefined;
    const out = [...lines];
    out[i] = line(b, op, o, r, spaced);
    return out;
  };
  const at = (kind: ErrorKind, l: string[] | undefined, lineNo = i, step = i) =>
    l === undefined ? undefined : { kind, line: lineNo, step, lines: l };
  switch (what) {
    case 0: // the carried value miscopied
      return at('copy', fields(v[i]! + delta, s.op, s.operand, s.result));
    case 1: {
      // the amount miscopied: a number the question does not show
      const o = s.operand + delta;
      return shown.includes(o) ? undefined : at('copy', fields(v[i]!, s.op, o, s.result));
    }
    case 2: {
      // the wrong operator, result as the right one gives it
      const op = OPS.filter((x) => x !== s.op)[pick % 3]!;
      return at('operation', fields(v[i]!, op, s.operand, s.result));
    }
    case 3: {
      // the amount of another step (or the start)
      const others = shown.filter((x) => x !== s.operand);
      return others.length === 0 ? undefined : at('operation', fields(v[i]!, s.op, others[pick % others.length]!, s.result));
    }
    case 4: // the result wrong
      return at('arithmetic', fields(v[i]!, s.op, s.operand, s.result + delta));
    case 5: // the step left out: the next line (or the answer) comes where it should be
      return at('missing_step', [...lines.slice(0, i), ...lines.slice(i + 1)]);
    case 6: // the step written twice
      return at('extra_step', [...lines.slice(0, i + 1), lines[i]!, ...lines.slice(i + 1)], i + 1, i + 1);
    case 7: // a step after the last one
      return at('extra_step', [...lines.slice(0, n), line(v[n]!, 'add', 17, v[n]! + 17, spaced), lines[n]!], n, n);
    case 8: // the answer left out
      return at('no_answer', lines.slice(0, n), n, n);
    default: // the answer miscopied
      return at('copy', [...lines.slice(0, n), `\\boxed{${v[n]! + delta}}`], n, n);
  }
}

const problem = fc.record({
  seed: fc.integer({ min: 0, max: 2 ** 31 }),
  index: fc.nat(100_000),
  spaced: fc.boolean(),
  short: fc.boolean(),
});
const chainOf = (p: { seed: number; index: number; short: boolean }): Chain =>
  p.short
    ? syntheticGenerator({ minSteps: 1, maxSteps: 3, operations: ['add', 'sub', 'mul', 'div'] }).task(p.seed, p.index).chain
    : longChainGenerator().task(p.seed, p.index).chain;

describe('labelCompletion', () => {
  it('a correct solution is correct, in either number layout, with blank lines and surrounding blanks', () => {
    fc.assert(
      fc.property(problem, (p) => {
        const chain = chainOf(p);
        const lines = correctLines(chain, p.spaced);
        expect(labelCompletion(chain, lines.join('\n'))).toEqual({
          kind: 'correct',
          line: -1,
          step: -1,
          correctSteps: chain.steps.length,
          span: null,
        });
        expect(labelCompletion(chain, '\n' + lines.map((l) => `  ${l} `).join('\n\n') + '\n').kind).toBe('correct');
      }),
      { numRuns: 200 },
    );
  });

  it('one corruption injected anywhere: it names that line, the step, the kind and the line span', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(
        problem,
        fc.nat(9),
        fc.nat(7),
        fc.integer({ min: 1, max: 50 }),
        fc.boolean(),
        fc.nat(20),
        (p, what, at, size, down, pick) => {
          const chain = chainOf(p);
          const i = at % chain.steps.length;
          const delta = down ? -size : size;
          const c = corrupt(chain, p.spaced, what, i, delta, pick);
          fc.pre(c !== undefined);
          const text = c!.lines.join('\n');
          const got = labelCompletion(chain, text);
          expect({ kind: got.kind, line: got.line, step: got.step, correctSteps: got.correctSteps }).toEqual({
            kind: c!.kind,
            line: c!.line,
            step: c!.step,
            correctSteps:
              c!.kind === 'extra_step' && c!.step === chain.steps.length ? chain.steps.length : Math.min(c!.step, chain.steps.length),
          });
          if (c!.kind === 'no_answer') expect(got.span).toEqual([text.length, text.length]);
          else expect(text.slice(got.span![0], got.span![1])).toBe(c!.lines[c!.line]);
          seen.add(c!.kind);
        },
      ),
      { numRuns: 2000 },
    );
    expect([...seen].sort()).toEqual(['arithmetic', 'copy', 'extra_step', 'missing_step', 'no_answer', 'operation']);
  });

  it('any text gets a label and never throws; what it cannot read is unlabelled with the line and the reason', () => {
    const chain = longChainGenerator().task(1, 1).chain;
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const got = labelCompletion(chain, text);
        expect(['correct', 'copy', 'arithmetic', 'operation', 'missing_step', 'extra_step', 'no_answer', 'unlabelled']).toContain(got.kind);
        if (got.kind === 'unlabelled') expect(got.reason).toBeTruthy();
      }),
      { numRuns: 500 },
    );
    const lines = correctLines(chain, true);
    const garbled = [lines[0]!, 'so the next one is', ...lines.slice(1)].join('\n');
    expect(labelCompletion(chain, garbled)).toMatchObject({
      kind: 'unlabelled',
      line: 1,
      correctSteps: 1,
      reason: '"so the next one is" is neither a step "a op b = c" nor a \\boxed{} answer',
    });
    expect(labelCompletion(chain, [...lines.slice(0, -1), '\\boxed{x + 1}'].join('\n'))).toMatchObject({
      kind: 'unlabelled',
      line: lines.length - 1,
    });
    // digits with blanks in the box are graded as a product, never as the answer
    const v = chainValues(chain).at(-1)!;
    expect(labelCompletion(chain, [...lines.slice(0, -1), `\\boxed{${formatNumber(v, true)}}`].join('\n')).kind).toBe('copy');
    // after the answer, a further step is extra; the empty completion has no answer
    expect(labelCompletion(chain, [...lines, lines[0]!].join('\n'))).toMatchObject({ kind: 'extra_step', line: lines.length });
    expect(labelCompletion(chain, '')).toMatchObject({ kind: 'no_answer', line: 1, step: 0, correctSteps: 0, span: [0, 0] });
  });
});

describe('labelTokens', () => {
  const tok = Tokenizer.builtin('cl100k_base');

  it('the token span of the first wrong line is byte-exact: every token with a byte in the line, no other', () => {
    fc.assert(
      fc.property(problem, fc.nat(9), fc.nat(7), fc.integer({ min: 1, max: 50 }), fc.nat(20), (p, what, at, size, pick) => {
        const chain = chainOf(p);
        const c = corrupt(chain, p.spaced, what, at % chain.steps.length, size, pick);
        fc.pre(c !== undefined);
        const text = c!.lines.join('\n');
        const ids = [...tok.encode(text), 100257]; // + <|endoftext|>, which decodes to no bytes
        const got = labelTokens(chain, ids, tok, { special: [100257] });
        expect(got.text).toBe(text);
        expect(got.kind).toBe(labelCompletion(chain, text).kind);
        const starts = [0];
        for (const id of ids) starts.push(starts.at(-1)! + (id === 100257 ? 0 : tok.tokenBytes(id).length));
        const [a, b] = got.tokens!;
        const [s, e] = got.span!;
        if (s === e) {
          // no answer: the EOS at the very end is the decision that ended it
          expect([a, b]).toEqual([ids.length - 1, ids.length]);
        } else {
          expect(starts[a]!).toBeLessThanOrEqual(s);
          expect(starts[a + 1]!).toBeGreaterThan(s);
          expect(starts[b - 1]!).toBeLessThan(e);
          expect(starts[b]!).toBeGreaterThanOrEqual(e);
          expect(tok.decode(ids.slice(a, b))).toContain(c!.lines[c!.line]!.trim());
        }
      }),
      { numRuns: 300 },
    );
  });

  it('without `special`, a special token is its text: an EOS after the answer leaves it an answer line, on its own line it is unreadable', () => {
    const { chain, solution } = longChainGenerator().task(2, 2);
    expect(labelTokens(chain, [...tok.encode(solution), 100257], tok).kind).toBe('correct');
    expect(labelTokens(chain, [...tok.encode(solution + '\n'), 100257], tok).kind).toBe('unlabelled');
    expect(labelTokens(chain, [...tok.encode(solution + '\n'), 100257], tok, { special: [100257] }).kind).toBe('correct');
  });

  it('spans of tokens that split a character or carry no bytes', () => {
    // bytes: [0,2) [2,3) [3,3) [3,6)  (a 2-byte piece, a 1-byte one, EOS-like, 3 bytes)
    const starts = Int32Array.from([0, 2, 3, 3, 6]);
    expect(tokenSpan(starts, 1, 2)).toEqual([0, 1]);
    expect(tokenSpan(starts, 1, 4)).toEqual([0, 4]);
    expect(tokenSpan(starts, 2, 3)).toEqual([1, 2]);
    expect(tokenSpan(starts, 3, 3)).toEqual([2, 3]);
    expect(tokenSpan(starts, 6, 6)).toEqual([4, 4]);
  });

  it('a token without bytes is refused, naming its index', () => {
    const chain = longChainGenerator().task(0, 0).chain;
    expect(() => labelTokens(chain, [5, 6], { tokenBytes: (id) => (id === 6 ? (undefined as never) : new Uint8Array([49])) })).toThrow(
      TaskError,
    );
    expect(() => labelTokens(chain, [5, 6], { tokenBytes: (id) => (id === 6 ? (undefined as never) : new Uint8Array([49])) })).toThrow(
      'item 1: token 6 (index 1) has no bytes',
    );
  });
});
