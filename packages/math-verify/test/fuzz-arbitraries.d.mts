import type fc from 'fast-check';
export const latexish: fc.Arbitrary<string>;
export const canonicalNumber: fc.Arbitrary<string>;
export const canonicalAnswer: fc.Arbitrary<string>;
export const canonicalPair: fc.Arbitrary<[string, string]>;
