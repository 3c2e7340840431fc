import { describe, expect, it } from 'vitest';
import { MathVerifyError } from './errors.js';
import { problemRounding } from './rounding.js';
import { mathReward, mathRewardBatch, verifyAnswer } from './verify.js';

const eq = (gold: string, pred: string, options?: Parameters<typeof verifyAnswer>[2]): boolean => verifyAnswer(gold, pred, options).equal;

describe('verifyAnswer: numbers', () => {
  it('compares integers exactly, at any size', () => {
    expect(eq('123456789012345678901234567890', '123456789012345678901234567890.0')).toBe(true);
    expect(eq('123456789012345678901234567890', '123456789012345678901234567891')).toBe(false);
    expect(eq('2^{100}', '1267650600228229401496703205376')).toBe(true);
    expect(eq('\\frac{1}{2004!}', '\\frac{1}{2006!}')).toBe(false);
    expect(eq('\\frac{1}{2^{99}}', '\\frac{1}{2^{98}}')).toBe(false);
  });
  it('compares exact values exactly and needs float noise only where floating point is used', () => {
    expect(eq('\\frac{2}{4}', '1/2')).toBe(true);
    expect(eq('\\frac{1}{12}', '0.0833333333333333')).toBe(false); // a decimal is an exact number, and not 1/12
    expect(eq('5', '5.001')).toBe(false);
    expect(eq('16386.17', '16386.18')).toBe(false);
    expect(eq('0.29', '0.290243531202435')).toBe(false);
    expect(eq('\\sqrt{2}', '1.4142135623730951')).toBe(true); // sqrt 2 to double precision
    expect(eq('\\sqrt{2}', '1.41421356')).toBe(false);
    expect(eq('\\sqrt{2}\\cdot\\sqrt{8}', '4')).toBe(true); // 4.000000000000001 in floating point
  });
  it('applies an explicit tolerance only where a decimal or an inexact value is involved', () => {
    expect(eq('\\frac{1}{12}', '0.0833333333333333', { relTol: 1e-9 })).toBe(true);
    expect(eq('\\sqrt{2}', '1.41421356', { relTol: 1e-6 })).toBe(true);
    expect(eq('1000', '1000.01', { relTol: 1e-6 })).toBe(false);
    expect(eq('\\frac{1}{3}', '0.33333', { relTol: 1e-4 })).toBe(true);
    expect(eq('11111111100', '11111111101', { relTol: 1e-4 })).toBe(false); // integers stay exact under any tolerance
    expect(eq('\\frac{1}{3}', '\\frac{10000}{30001}', { relTol: 1e-4 })).toBe(false);
  });
  it('handles thousands separators, mixed numbers, bases, units and currency', () => {
    expect(eq('7425000', '7,425,000')).toBe(true);
    expect(eq('14916', '14{,}916')).toBe(true);
    expect(eq('1.5', '1\\frac{1}{2}')).toBe(true);
    expect(eq('4210_{7}', '4210_7')).toBe(true);
    expect(eq('1112112_3', '1112122_3')).toBe(false);
    expect(eq('10', '10\\text{ cm}^2')).toBe(true);
    expect(eq('10', '\\$10')).toBe(true);
    expect(eq('90', '90^\\circ')).toBe(true);
  });
});

describe('verifyAnswer: rounding only where the gold, the problem or an option asks for it (issue 15)', () => {
  it('accepts no rounded, truncated or nearby value by default', () => {
    expect(eq('7.0', '7')).toBe(true);
    expect(eq('7.0', '7.01')).toBe(false); // a gold 7.0 (AMC golds from JSON) is the integer 7
    expect(eq('27.0', '26.99')).toBe(false);
    expect(eq('5.0', '5.04')).toBe(false);
    expect(eq('1.25', '1.2')).toBe(false);
    expect(eq('1.25', '1.3')).toBe(false);
    expect(eq('\\frac{2}{3}', '0.667')).toBe(false);
    expect(eq('\\frac{2}{3}', '0.6667')).toBe(false);
    expect(eq('7\\pi', '21.99')).toBe(false);
    expect(eq('\\sqrt{2}', '1.414')).toBe(false);
    expect(eq('\\frac{x}{3}', '0.33x')).toBe(false); // no rounding inside expressions either
    expect(eq('\\frac{x}{2}', '0.5x')).toBe(true);
  });
  it('rounds to the decimals the problem asks for (roundTo, problemRounding)', () => {
    expect(problemRounding('Express your answer to the nearest tenth.')).toBe(1);
    expect(problemRounding('Round your answer to two decimal places.')).toBe(2);
    expect(problemRounding('What is the probability? Express your answer as a common fraction.')).toBeNull();
    const tenth = { roundTo: problemRounding('to the nearest tenth') };
    expect(eq('\\frac{2}{3}', '0.7', tenth)).toBe(true);
    expect(eq('\\frac{2}{3}', '0.6', tenth)).toBe(false); // truncation is not rounding
    expect(eq('0.7', '0.67', tenth)).toBe(true);
    expect(eq('7\\pi', '22.0', tenth)).toBe(true);
    expect(eq('7\\pi', '21.9', tenth)).toBe(false);
    expect(eq('12', '13', { roundTo: 0 })).toBe(false); // integers stay exact
  });
  it('reads a gold that states an approximation at its own precision', () => {
    expect(eq('\\approx 1.41', '\\sqrt{2}')).toBe(true);
    expect(eq('\\approx 1.41', '1.414')).toBe(true);
    expect(eq('\\approx 1.41', '1.41')).toBe(true);
    expect(eq('\\approx 1.41', '1.42')).toBe(false);
    expect(eq('\\approx 1.41', '1.4')).toBe(false);
    expect(eq('≈ 3.14', '\\pi')).toBe(true);
    expect(eq('x = \\frac{1}{3} \\approx 0.33', '\\frac{1}{3}')).toBe(true);
    expect(eq('x = \\frac{1}{3} \\approx 0.33', '0.33')).toBe(true);
    expect(eq('x = \\frac{1}{3} \\approx 0.33', '0.34')).toBe(false);
    expect(eq('\\approx(2.3217,4.3717)', '(2.32171, 4.37168)')).toBe(true);
    expect(eq('1.41', '\\approx \\sqrt{2}')).toBe(false); // only the gold's approximation counts
  });
  it('rounds a decimal to its own digits only with roundedDecimals, never by truncation, and never for a gold 7.0', () => {
    const r = { roundedDecimals: true };
    expect(eq('\\sqrt{2}', '1.414', r)).toBe(true);
    expect(eq('\\sqrt{2}', '1.415', r)).toBe(false);
    expect(eq('\\frac{2}{3}', '0.667', r)).toBe(true);
    expect(eq('\\frac{2}{3}', '0.666', r)).toBe(false);
    expect(eq('\\frac{1}{3}', '0.3', r)).toBe(false); // one significant digit is not enough
    expect(eq('1.25', '1.3', r)).toBe(true);
    expect(eq('1.25', '1.2', r)).toBe(false);
    expect(eq('0.29', '0.290243531202435', r)).toBe(true);
    expect(eq('7.0', '7.01', r)).toBe(false);
    expect(eq('5.0', '5.04', r)).toBe(false);
  });
});

describe('verifyAnswer: units (issue 15)', () => {
  it("refuses a pred in another unit than the gold's, and accepts the gold's unit in any spelling or none", () => {
    expect(eq('42\\text{ inches}', '42\\text{ feet}')).toBe(false);
    expect(verifyAnswer('42\\text{ inches}', '42\\text{ feet}').reason).toBe('units differ: inch vs foot');
    expect(eq('42\\text{ inches}', '42')).toBe(true);
    expect(eq('42\\text{ inches}', '42\\text{ in}')).toBe(true);
    expect(eq('42\\text{ inches}', '42 inch')).toBe(true);
    expect(eq('42', '42\\text{ feet}')).toBe(true); // the gold names no unit
    expect(eq('10\\text{ cm}^2', '10\\text{ square centimeters}')).toBe(true);
    expect(eq('10\\text{ cm}^2', '10\\text{ cm}')).toBe(false);
    expect(eq('5 \\text{ km/h}', '5\\text{ km}/\\text{h}')).toBe(true);
    expect(eq('5 \\text{ km/h}', '5\\text{ m}/\\text{s}')).toBe(false);
    expect(eq('30^\\circ', '30\\text{ degrees}')).toBe(true);
    expect(eq('30^\\circ', '30 \\text{ radians}')).toBe(false);
    expect(eq('12\\text{ apples}', '12\\text{ oranges}')).toBe(true); // not units: words after a number are ignored
    expect(eq('10\\text{ square units}', '10\\text{ cm}^2')).toBe(true); // generic units
    expect(eq('3.5\\text{ feet}', '42\\text{ inches}')).toBe(false); // no conversion
  });
});

describe('verifyAnswer: issue 15 false negatives', () => {
  it('reads word answers as words: No, Yes, True, names', () => {
    for (const [g, p] of [
      ['No', '\\text{No}'],
      ['No', 'no'],
      ['NO', 'No'],
      ['\\text{no}', 'No.'],
      ['Yes', '\\text{yes}'],
      ['True', '\\textbf{true}'],
      ['False', 'false'],
      ['\\text{Evelyn}', 'Evelyn'],
      ['Devon', '\\text{devon}'],
    ])
      expect(eq(g as string, p as string), `${g} vs ${p}`).toBe(true);
    expect(eq('No', 'Yes')).toBe(false);
    expect(eq('No', 'N')).toBe(false);
    expect(eq('ab', 'ba')).toBe(true); // two letters without a word meaning stay a product
  });
  it('reads a comma between digit groups by context', () => {
    expect(eq('56,76', '56, 76')).toBe(true);
    expect(eq('56,76', '\\{76, 56\\}')).toBe(true);
    expect(eq('56,76', '56.76')).toBe(false); // two quantities, not a decimal
    expect(eq('56,144', '56, 144')).toBe(true); // two quantities against a list
    expect(eq('56,144', '56144')).toBe(true); // a thousands separator against a number
    expect(eq('58,500', '58500')).toBe(true);
    expect(eq('58,500', '58501')).toBe(false);
    expect(eq('0,2', '0, 2')).toBe(true);
    expect(eq('0,2', '0.2')).toBe(false);
    expect(eq('1,22', '1.22')).toBe(false);
    expect(eq('1,22', '1.22', { decimalComma: true })).toBe(true);
    expect(eq('1000.99', '1000,99', { decimalComma: true })).toBe(true);
    expect(eq('1,22', '1, 22', { decimalComma: true })).toBe(true);
  });
  it('sums and products over long ranges in closed form, and with symbolic bounds', () => {
    expect(eq('500000000500000000', '\\sum_{k=1}^{10^9} k')).toBe(true);
    expect(eq('500000000500000001', '\\sum_{k=1}^{10^9} k')).toBe(false);
    expect(eq('\\frac{n(n+1)}{2}', '\\sum_{k=1}^{n} k')).toBe(true);
    expect(eq('\\sum_{i=1}^{n} i^2', '\\frac{n(n+1)(2n+1)}{6}')).toBe(true);
    expect(eq('\\sum_{i=1}^{n} i^2', '\\frac{n(n+1)(2n-1)}{6}')).toBe(false);
    expect(eq('0', '\\sum_{k=1}^{10^9} (-1)^k')).toBe(true);
    expect(eq('2^{55}', '\\prod_{k=1}^{10} 2^k')).toBe(true);
    expect(eq('2^{5050}', '\\prod_{k=1}^{100} 2^k')).toBe(true);
    expect(eq('3^{20000}', '\\prod_{k=1}^{20000} 3')).toBe(true);
    expect(eq('10', '\\sum_{i=1}^{3}\\sum_{j=1}^{i} j')).toBe(true);
    // A closed form that loses its exact value (2^{-10^9} underflows) is not evaluable, never "close to 1".
    expect(verifyAnswer('1', '\\sum_{k=1}^{10^9} 2^{-k}')).toMatchObject({ equal: false, reason: 'pred not evaluable' });
  });
  it("reads full-width and other scripts' digits", () => {
    expect(eq('3', '３')).toBe(true);
    expect(eq('12.5', '１２．５')).toBe(true);
    expect(eq('(1,2)', '（１，２）')).toBe(true);
    expect(eq('314', '\u0663\u0661\u0664')).toBe(true);
  });
  it('accepts an inequality for an interval gold only when asked, or when strict is off', () => {
    expect(eq('[-2, 7]', '-2 \\le x \\le 7')).toBe(false);
    expect(eq('[-2, 7]', '-2 \\le x \\le 7', { allowSetRelationComp: true })).toBe(true);
    expect(eq('[-2, 7]', '-2 \\le x \\le 7', { strict: false })).toBe(true);
    expect(eq('[-2, 7]', '-2 \\le x \\le 7', { strict: false, allowSetRelationComp: false })).toBe(false);
    expect(eq('-2 \\le x \\le 7', '[-2, 7]')).toBe(true); // the gold's own inequality always reads as its interval
  });
});

describe('verifyAnswer: percent conventions', () => {
  it('reads x% as x/100 or x by default, and either way on request', () => {
    expect(eq('50\\%', '0.5')).toBe(true);
    expect(eq('50\\%', '50')).toBe(true);
    expect(eq('50\\%', '0.5', { percent: 'strip' })).toBe(false);
    expect(eq('50\\%', '50', { percent: 'fraction' })).toBe(false);
    expect(eq('28\\%', '28 percent', { percent: 'fraction' })).toBe(true);
  });
});

describe('verifyAnswer: symbolic', () => {
  it('decides identities by sampling the free variables', () => {
    expect(eq('(x+1)^2', 'x^2+2x+1')).toBe(true);
    expect(eq('x^2+1', 'x^2')).toBe(false);
    expect(eq('\\tan^2(y)+1', '\\sec^2(y)')).toBe(true);
    expect(eq('\\frac{x+2}{7}', '\\frac{x}{7}+\\frac{2}{7}')).toBe(true);
    expect(eq('x+2n+1', 'x+1')).toBe(false);
    expect(eq('p(1-p)', 'p - p^2')).toBe(true); // a product, not a function p
    expect(eq('f(x)', 'f(x)')).toBe(true);
    expect(eq('|x|', 'x')).toBe(false); // caught at negative sample points
    expect(eq('\\sqrt{x^2}', 'x')).toBe(false);
    expect(eq('\\sqrt{x^2}', '|x|')).toBe(true);
    expect(eq('x^{2/3}', '\\sqrt[3]{x}^2')).toBe(true); // complex principal powers at negatives are skipped
    expect(eq('\\sin(90^{\\circ}-x)', '\\cos(x)')).toBe(true);
  });
  it('evaluates pi, e, roots, logs and trig', () => {
    expect(eq('1', '\\sin(\\frac{\\pi}{2})')).toBe(true);
    expect(eq('3', '\\log_2 8')).toBe(true);
    expect(eq('2', '\\log_{10}(100)')).toBe(true);
    expect(eq('-2', '\\sqrt[3]{-8}')).toBe(true);
    expect(eq('-1', 'e^{i\\pi}')).toBe(true);
    expect(eq('3\\sqrt{13}', '\\sqrt{117}')).toBe(true);
    expect(eq('55', '\\sum_{n=1}^{10} n')).toBe(true);
    expect(eq('55', '\\sum_{i=1}^{10} i')).toBe(true);
    expect(eq('ab', 'ba')).toBe(true);
  });
  it('handles complex numbers', () => {
    expect(eq('1+2i', 'i(2-i)')).toBe(true);
    expect(eq('1+2i', '1-2i')).toBe(false);
  });
  it('never calls two unparseable answers equal, and never calls an overflow equal to anything', () => {
    expect(verifyAnswer('}{', ')(')).toMatchObject({ equal: false });
    expect(verifyAnswer('\\frac{', '\\frac{1')).toMatchObject({ equal: false });
    expect(verifyAnswer('5^{5^{5^5}}', '5^{5^{5^5}}+1')).toMatchObject({ equal: false, reason: 'value too large to compare' });
    expect(verifyAnswer('10^{10^{10}}', '10^{10^{10}}+1').equal).toBe(false);
  });
});

describe('verifyAnswer: structures', () => {
  it('compares sets unordered and tuples in order', () => {
    expect(eq('\\{1,2,3\\}', '\\{3,1,2\\}')).toBe(true);
    expect(eq('1, 2, 3', '3, 2, 1')).toBe(true);
    expect(eq('1, 2, 3', '3, 2, 1', { listOrder: 'ordered' })).toBe(false);
    expect(eq('(1,2)', '(2,1)')).toBe(false);
    expect(eq('(1,3)', '\\{1,3\\}')).toBe(true);
    expect(eq('(3,1)', '\\{1,3\\}')).toBe(false);
    expect(eq('\\sqrt{67},-\\sqrt{85}', '\\sqrt{67}')).toBe(false);
    expect(eq('1 \\pm \\sqrt{2}', '\\{1-\\sqrt2, 1+\\sqrt2\\}')).toBe(true);
    expect(eq('\\pm 2021', '2021')).toBe(false);
  });
  it('compares intervals with their ends and unions in any order', () => {
    expect(eq('[0,1)', '[0,1)')).toBe(true);
    expect(eq('(0,9)', '[0,9)')).toBe(false);
    expect(eq('(-\\infty, \\infty)', '\\mathbb{R}')).toBe(true);
    expect(eq('(-\\infty, \\infty)', '\\text{all real numbers}')).toBe(true);
    expect(eq('\\infty', 'infinity')).toBe(true);
    expect(eq('(-\\infty, -3] \\cup [2, \\infty)', '[2,\\infty) \\cup (-\\infty,-3]')).toBe(true);
    expect(eq('(\\frac{3}{5},\\frac{8}{3}]', '(0.6,2.6667]')).toBe(false);
    expect(eq('(\\frac{3}{5},\\frac{8}{3}]', '(0.6,2.6667]', { roundTo: 4 })).toBe(true);
  });
  it('compares matrices entry by entry, including sums and products', () => {
    expect(eq('\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}', '\\left[\\begin{array}{cc}1 & 2 \\\\ 3 & 4\\end{array}\\right]')).toBe(
      true,
    );
    expect(eq('\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}', '\\begin{bmatrix}1 & 2 \\\\ 3 & 5\\end{bmatrix}')).toBe(false);
    expect(
      eq(
        '\\begin{pmatrix}6 & 8 \\\\ 10 & 12\\end{pmatrix}',
        '\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix} + \\begin{pmatrix}5 & 6 \\\\ 7 & 8\\end{pmatrix}',
      ),
    ).toBe(true);
    expect(
      eq(
        '\\begin{pmatrix}7 & 10 \\\\ 15 & 22\\end{pmatrix}',
        '\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}',
      ),
    ).toBe(true);
  });
  it('reads equations against values the way gold says', () => {
    expect(eq('x = 5', '5')).toBe(true);
    expect(eq('5', 'x = 2 + 3 = 5')).toBe(true);
    expect(eq('7 = 11a+c', '11a+c')).toBe(false);
    expect(eq('2x + z = 1', '1')).toBe(false);
    expect(eq('2x+4y-3=0', 'y=-\\frac{1}{2}x+\\frac{3}{4}')).toBe(true);
    expect(eq('x^2-1=0', 'x-1=0')).toBe(false);
    expect(eq('0 = 0', 'x = 0')).toBe(false);
  });
  it('compares inequalities up to a positive factor, and against intervals only from gold by default', () => {
    expect(eq('x < 1', '-x > -1')).toBe(true);
    expect(eq('x > 5', 'x < 5')).toBe(false);
    expect(eq('x \\geq 5', '[5, \\infty)')).toBe(true);
    expect(eq('[5, \\infty)', 'x \\geq 5')).toBe(false);
    expect(eq('[5, \\infty)', 'x \\geq 5', { allowSetRelationComp: true })).toBe(true);
  });
  it('renames variables only when strict is off', () => {
    expect(eq('f(x)', 'f(y)')).toBe(false);
    expect(eq('f(x)', 'f(y)', { strict: false })).toBe(true);
    expect(eq('x^2 + y', 'a^2 + b', { strict: false })).toBe(true);
    expect(eq('x^2 + y', 'a + b^2', { strict: false })).toBe(true);
    expect(eq('x^2 + y', 'a^3 + b', { strict: false })).toBe(false);
  });
  it('reads a <= |z| <= b as two intervals', () => {
    expect(eq('1 \\leq |z| \\leq \\frac{3}{2}', 'z \\in [-\\frac{3}{2}, -1] \\cup [1, \\frac{3}{2}]')).toBe(true);
    expect(eq('1 \\leq |z| \\leq \\frac{3}{2}', 'z \\in [1, \\frac{3}{2}]')).toBe(false);
  });
  it('compares choices and words', () => {
    expect(eq('C', '\\text{(C)}')).toBe(true);
    expect(eq('C', 'D')).toBe(false);
    expect(eq('\\text{Even}', 'even')).toBe(true);
    expect(eq('odd', '\\text{oddd}')).toBe(false);
    expect(eq('\\text{No  solution}', 'nosolution')).toBe(true);
    expect(eq('\\text{E}', 'E')).toBe(true);
    expect(eq('d', '\\text{E}')).toBe(false);
  });
  it('shows the parsed forms it compared', () => {
    expect(verifyAnswer('\\dfrac{1}{2}', '0.5')).toEqual({ equal: true, reason: 'exact', gold: '1/2', pred: '0.5' });
  });
});

describe('mathReward', () => {
  it('needs a box by default: numbers in prose are not rewarded', () => {
    expect(mathReward('I think it is 42.', '42')).toEqual({ reward: 0, extracted: null, reason: 'no_answer', answer: null });
    expect(mathReward('so \\boxed{42}.', '42')).toMatchObject({ reward: 1, extracted: '42' });
    expect(mathReward('I think it is 42.', '42', { fallbacks: true })).toMatchObject({ reward: 1, extracted: '42' });
  });
  it('reads a boxed gold solution and the last boxed pred', () => {
    expect(mathReward('first \\boxed{3} ... finally \\boxed{6}', 'The solution gives $\\boxed{6}$.').reward).toBe(1);
    expect(mathReward('first \\boxed{3} ... finally \\boxed{6}', '3', { extract: 'first' }).reward).toBe(1);
  });
  it('stops at the end of the turn: a hallucinated next turn is not graded', () => {
    const c = 'so b = \\boxed{\\frac{5}{3}}. <|im_start|>user Next problem... <|im_start|>assistant x = \\boxed{8}';
    expect(mathReward(c, '\\frac{5}{3}').reward).toBe(1);
    expect(mathReward(c, '8', { endOfTurnMarkers: [] }).reward).toBe(1);
  });
  it('grades large answers (a 60 x 60 matrix), and refuses only answers past maxAnswerChars', () => {
    const row = (i: number): string => Array.from({ length: 60 }, (_, j) => String(((i * 7 + j * 3) % 101) - 50)).join(' & ');
    const matrix = `\\begin{pmatrix}${Array.from({ length: 60 }, (_, i) => row(i)).join(' \\\\ ')}\\end{pmatrix}`;
    expect(matrix.length).toBeGreaterThan(2000);
    expect(mathReward(`so \\boxed{${matrix}}`, matrix).reward).toBe(1);
    expect(mathReward(`so \\boxed{${matrix.replace(/pmatrix/g, 'bmatrix')}}`, matrix).reward).toBe(1);
    expect(mathReward(`so \\boxed{${matrix.replace('& 0 &', '& 1 &')}}`, matrix).reward).toBe(0);
    expect(mathReward('\\boxed{1}', `\\boxed{${'1+'.repeat(2000)}1}`)).toMatchObject({
      reward: 0,
      reason: expect.stringMatching(/differ/),
    });
    expect(mathReward('\\boxed{1}', `\\boxed{${'1+'.repeat(60_000)}1}`)).toEqual({
      reward: 0,
      extracted: null,
      reason: 'gold_too_large',
      answer: null,
      limit: 'size',
    });
  });
  it('grades only after the reasoning delimiter when asked', () => {
    const opts = { reasoningDelimiters: ['</think>'] };
    expect(mathReward('<think> \\boxed{42} </think> no box here', '42', opts)).toMatchObject({ reward: 0, reason: 'no_answer' });
    expect(mathReward('<think> incomplete \\boxed{42}', '42', opts)).toMatchObject({ reward: 0, reason: 'no_reasoning_end' });
    expect(mathReward('<think>..</think> \\boxed{42}', '42', opts).reward).toBe(1);
  });
  it('grades multiple-choice letters in choice mode', () => {
    expect(mathReward("The answer is for sure D, it can't be A or B", '(D) Alina', { mode: 'choice' }).reward).toBe(1);
    expect(mathReward('C', '(A) Cecile', { mode: 'choice' }).reward).toBe(0);
  });
  it('reads a long completion from its end (its final box), and refuses only an oversized answer', () => {
    const long = `\\boxed{3} ${'x'.repeat(200)} \\boxed{4}`;
    const tail = mathReward(long, '4', { maxCompletionChars: 100 });
    expect(tail).toMatchObject({ reward: 1, extracted: '4' });
    expect(long.slice(tail.answer!.contentStart, tail.answer!.contentEnd)).toBe('4');
    expect(mathReward(long, '3', { maxCompletionChars: 100, extract: 'first' })).toMatchObject({ reward: 1, extracted: '3' });
    expect(mathReward(`\\boxed{${'1+'.repeat(50)}1}`, '51', { maxAnswerChars: 20 })).toMatchObject({
      reward: 0,
      reason: 'answer_too_large',
    });
  });
  it('says which box it graded, as indices into the completion (also after a reasoning delimiter)', () => {
    const c = 'First \\boxed{3}. Checking again, the answer is \\boxed{ 6 }.';
    const r = mathReward(c, '6');
    expect(r.answer).not.toBeNull();
    const a = r.answer!;
    expect([c.slice(a.start, a.contentStart), c.slice(a.contentStart, a.contentEnd), c.slice(a.contentEnd, a.end)]).toEqual([
      '\\boxed{',
      ' 6 ',
      '}',
    ]);
    const first = mathReward(c, '6', { extract: 'first' });
    expect([first.reward, c.slice(first.answer!.contentStart, first.answer!.contentEnd)]).toEqual([0, '3']);
    const joined = 'so \\boxed{1}, \\boxed{2}';
    const j = mathReward(joined, '1, 2').answer!;
    expect(joined.slice(j.start, j.end)).toBe('\\boxed{1}, \\boxed{2}');
    const think = '<think> \\boxed{5} </think> so \\boxed{7}';
    const t = mathReward(think, '7', { reasoningDelimiters: ['</think>'] }).answer!;
    expect(think.slice(t.contentStart, t.contentEnd)).toBe('7');
    expect(mathReward('I think 7', '7', { fallbacks: true })).toMatchObject({ reward: 1, answer: null });
  });
  it('refuses non-string input with a typed error naming the argument', () => {
    expect(() => mathReward(undefined as never, '1')).toThrow(
      expect.objectContaining({
        name: 'MathVerifyError',
        code: 'invalid_input',
        message: expect.stringMatching(/^field completion: must be a string \(got undefined\)$/),
      }),
    );
    expect(() => verifyAnswer('1', 5 as never)).toThrow(/^field pred: must be a string \(got number\)$/);
    expect(() => mathRewardBatch(['\\boxed{1}', null as never], ['1', '2'])).toThrow(
      expect.objectContaining({ code: 'invalid_input', location: { index: 1, field: 'completion' } }),
    );
  });
  it('batches, and rejects mismatched lengths with a typed error', () => {
    expect(mathRewardBatch(['\\boxed{1}', '\\boxed{2}'], ['1', '3']).map((r) => r.reward)).toEqual([1, 0]);
    expect(() => mathRewardBatch(['a'], [])).toThrow(MathVerifyError);
  });
  it('rejects invalid options naming the field', () => {
    try {
      mathReward('\\boxed{1}', '1', { percent: 'sometimes' } as never);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(MathVerifyError);
      expect((e as MathVerifyError).code).toBe('invalid_options');
      expect((e as Error).message).toMatch(/percent/);
    }
  });
});

describe('named arguments: { completion, gold } and { gold, pred } (issue 42)', () => {
  it('give the positional verdicts, and the swapped positional call is what they prevent', () => {
    const completion = 'the sum is \\boxed{10}';
    expect(mathReward({ completion, gold: '10' })).toEqual(mathReward(completion, '10'));
    expect(mathReward({ gold: '10', completion }, { fallbacks: true })).toEqual(mathReward(completion, '10', { fallbacks: true }));
    expect(verifyAnswer({ gold: '\\frac12', pred: '0.5' })).toEqual(verifyAnswer('\\frac12', '0.5'));
    // The mistake the names rule out: the gold passed where the completion goes has no box, so nothing is graded.
    expect(mathReward('10', completion).reward).toBe(0);
  });

  it("take the item's problem statement, which decides the unit asked", () => {
    const problem = 'What is the height in centimeters of the cylinder?';
    expect(mathReward({ completion: '\\boxed{5\\text{ m}}', gold: '5', problem }).reason).toBe(
      'unit: the problem asks for centimeter, the answer is in meter',
    );
    expect(verifyAnswer({ gold: '5', pred: '5\\text{ m}', problem }).equal).toBe(false);
    expect(verifyAnswer({ gold: '5', pred: '5\\text{ m}', problem: null }).equal).toBe(true);
    expect(mathReward({ completion: '\\boxed{5\\text{ m}}', gold: '5', problem }, { problem }).reward).toBe(0);
  });

  it('refuse a missing or unknown field, a problem given twice, and options in third place, naming what is wrong', () => {
    const err = (f: () => unknown): MathVerifyError => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(MathVerifyError);
        return e as MathVerifyError;
      }
      throw new Error('did not throw');
    };
    expect(err(() => mathReward({ gold: '1' } as never)).message).toMatch(/completion.*must be a string \(got undefined\)/);
    expect(err(() => verifyAnswer({ gold: '1', prediction: '1' } as never)).message).toMatch(/unknown field "prediction"/);
    expect(err(() => mathReward({ completion: 'x', gold: '1', problem: 'a' }, { problem: 'b' })).message).toMatch(/problem given both/);
    expect(err(() => mathReward({ completion: 'x', gold: '1' }, '1' as never)).message).toMatch(/options second, nothing third/);
    expect(err(() => verifyAnswer({ gold: '1', pred: '1', problem: 3 } as never)).message).toMatch(/problem.*must be a string/);
  });
});
