import { describe, expect, it } from 'vitest';
import { commaReadings, normalizeAnswer, toAsciiForms } from './normalize.js';

describe('normalizeAnswer', () => {
  it.each([
    ['\\left( \\frac{1}{3} \\right)', '( \\frac{1}{3} )'],
    ['\\dfrac{1}{3}', '\\frac{1}{3}'],
    ['\\tfrac12 + \\cfrac{1}{2}', '\\frac12 + \\frac{1}{2}'],
    ['\\displaystyle x', 'x'],
    ['14{,}916', '14,916'],
    ['11,\\! 111,\\! 111,\\! 100', '11,111,111,100'],
    ['1\\,000', '1000'],
    ['1 000', '1000'],
    ['\\$10', '10'],
    ['90^\\circ', '90\\degree'],
    ['90^{\\circ}', '90\\degree'],
    ['28\\%', '28%'],
    ['28 percent', '28%'],
    ['28 pct', '28%'],
    ['185\\', '185'],
    ['5.', '5'],
    ['3000!', '3000!'],
    ['\\\\frac{1}{2}', '\\frac{1}{2}'],
    ['08:34 \\text{P.M.}', '20:34'],
    ['12:15 am', '0:15'],
  ])('%j -> %j', (input, want) => {
    expect(normalizeAnswer(input)).toBe(want);
  });

  it('keeps matrix row breaks while removing spacing commands', () => {
    expect(normalizeAnswer('\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}')).toBe('\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}');
    expect(normalizeAnswer('a\\,b\\;c\\quad d\\!e')).toBe('a b c de');
  });
});

describe('commaReadings', () => {
  it('reads three-digit groups as thousands or a list, other groups as a list, a decimal comma only on request', () => {
    expect(commaReadings('58,500', false)).toEqual({ number: '58500', list: '58, 500' });
    expect(commaReadings('2,365,200,000', false)).toEqual({ number: '2365200000', list: '2, 365, 200, 000' });
    expect(commaReadings('56,76', false)).toEqual({ number: null, list: '56, 76' });
    expect(commaReadings('0,2', false)).toEqual({ number: null, list: '0, 2' });
    expect(commaReadings('56,76', true)).toEqual({ number: '56.76', list: '56, 76' });
    expect(commaReadings('0,111', true)).toEqual({ number: '0.111', list: '0, 111' });
    expect(commaReadings('-1,22', true)).toEqual({ number: '-1.22', list: '-1, 22' });
    expect(commaReadings('1,2,3', true)).toEqual({ number: null, list: '1, 2, 3' });
    expect(commaReadings('1, 22', true)).toBeNull();
    expect(commaReadings('1.5', true)).toBeNull();
  });
});

describe('toAsciiForms', () => {
  it("maps full-width forms and other scripts' digits to ASCII, one unit for one", () => {
    expect(toAsciiForms('３＋４＝（７）')).toBe('3+4=(7)');
    expect(toAsciiForms('\u0663\u0661\u0664 \u06f5 \u0967\u0968')).toBe('314 5 12');
    expect(toAsciiForms('x\u3000y')).toBe('x y');
    expect(normalizeAnswer('１２.５')).toBe('12.5');
  });
});
