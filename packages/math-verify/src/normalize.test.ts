import { describe, expect, it } from 'vitest';
import { decimalCommaForm, normalizeAnswer } from './normalize.js';

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

describe('decimalCommaForm', () => {
  it('reads a European decimal comma but not thousands groups or short lists', () => {
    expect(decimalCommaForm('1,22')).toBe('1.22');
    expect(decimalCommaForm('0,111')).toBe('0.111');
    expect(decimalCommaForm('1000,99')).toBe('1000.99');
    expect(decimalCommaForm('7,425')).toBeNull();
    expect(decimalCommaForm('-2,1')).toBeNull();
    expect(decimalCommaForm('1, 22')).toBeNull();
  });
});
