import { describe, expect, it } from 'vitest';
import { boxedContent } from './boxes.js';

describe('boxedContent', () => {
  it('returns the last balanced box by default, the first on request', () => {
    expect(boxedContent('a \\boxed{1} b \\boxed{\\frac{1}{2}} c')).toBe('\\frac{1}{2}');
    expect(boxedContent('a \\boxed{1} b \\boxed{2}', 'first')).toBe('1');
  });
  it('keeps multi-byte characters and escaped braces intact', () => {
    expect(boxedContent('so \\boxed{2π}')).toBe('2π');
    expect(boxedContent('\\fbox{\\{1, 2\\}}')).toBe('\\{1, 2\\}');
  });
  it('skips unbalanced boxes and returns null without one', () => {
    expect(boxedContent('\\boxed{3} then \\boxed{4')).toBe('3');
    expect(boxedContent('no box here')).toBeNull();
  });
});
