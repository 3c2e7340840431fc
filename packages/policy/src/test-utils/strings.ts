import { Rng } from '@rlvr/core';

const POOLS: Record<string, string[]> = {
  math: [
    '12345',
    '3.14159',
    '-42',
    '1e-9',
    '2^{10}',
    '(a+b)^2 = a^2 + 2ab + b^2',
    '7 × 8 = 56',
    '√2 ≈ 1.414',
    '∑_{i=1}^n i',
    'x ≤ y ≥ z ≠ w',
    '0.000001',
    '1,000,000',
    '½ + ¼ = ¾',
    '∞',
    'π r²',
  ],
  latex: [
    '\\boxed{42}',
    '\\frac{1}{2}',
    '\\sqrt{x^2+1}',
    '\\int_0^1 f(x)\\,dx',
    '\\left(\\frac{a}{b}\\right)',
    '$$E=mc^2$$',
    '\\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\end{pmatrix}',
    '\\alpha\\beta\\gamma',
    '\\boxed{\\dfrac{3}{4}}',
    '\\text{ and }',
    '\\mathbb{R}^n',
    '\\cdot',
    '\\{1,2\\}',
  ],
  code: [
    'def f(x):\n    return x*2\n',
    'for (let i = 0; i < n; i++) {',
    '}\n',
    '  if x == None:',
    'console.log("hi");',
    'import numpy as np',
    '#include <stdio.h>',
    'a->b',
    '&&',
    '||',
    '!==',
    '\t\treturn;',
    "print(f'{x!r}')",
    'SELECT * FROM t;',
    '// comment',
    '/* block */',
  ],
  cjk: [
    '数学',
    '答案是',
    '日本語のテキスト',
    '한국어 문장',
    '我们来计算一下',
    '第一步：',
    '（括号）',
    '，。！？',
    '漢字',
    'カタカナ',
    'ひらがな',
  ],
  emoji: ['😀', '👍🏽', '👨‍👩‍👧‍👦', '🇫🇷', '❤️', '🔥🔥', '✅', '🤔', '🧮', '⭐️'],
  space: [' ', '  ', '   ', '\n', '\n\n', '\n\n\n', '\t', ' \n', '\r\n', '    \n    ', '\u00a0', '\u3000', '\n \n'],
  words: [
    'Hello',
    'world',
    "don't",
    "it's",
    "WE'LL",
    'café',
    'naïve',
    'Ünïcödé',
    'résumé',
    'the',
    'answer',
    'Let',
    'is',
    'ﬁ',
    'Å',
    'e\u0301',
  ],
  special: ['<|im_start|>', '<|im_end|>', '<think>', '</think>', '<|endoftext|>', '<tool_call>'],
  punct: [
    '.',
    ',',
    '!',
    '?',
    '...',
    '---',
    '"',
    "'",
    '(',
    ')',
    '[',
    ']',
    '{',
    '}',
    ':',
    ';',
    '@',
    '#',
    '$',
    '%',
    '^',
    '&',
    '*',
    '~',
    '`',
    '\\',
  ],
};

/** `n` varied strings (math, LaTeX, code, CJK, emoji, runs of spaces and newlines, specials), seeded. */
export function variedStrings(n: number, seed = 1): string[] {
  const rng = new Rng(seed);
  const names = Object.keys(POOLS);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const parts = 1 + rng.int(12);
    let s = '';
    for (let j = 0; j < parts; j++) {
      const pool = POOLS[names[rng.int(names.length)]];
      s += pool[rng.int(pool.length)];
      if (rng.float() < 0.4) s += ' ';
    }
    if (rng.float() < 0.1) s = s.repeat(1 + rng.int(4));
    if (rng.float() < 0.05) s = String.fromCodePoint(...Array.from({ length: 1 + rng.int(8) }, () => 32 + rng.int(0x2fff)));
    out.push(s);
  }
  return out;
}
