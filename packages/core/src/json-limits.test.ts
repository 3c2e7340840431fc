import { describe, expect, it } from 'vitest';
import { jsonDepthExceeded, previewValue } from './json-limits.js';

const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n);
const nested = (n: number): unknown => JSON.parse(deep(n));

describe('jsonDepthExceeded', () => {
  it('finds the first container past the limit, with its path, at any depth', () => {
    expect(jsonDepthExceeded({ a: [1, { b: 2 }] }, 3)).toBeNull();
    expect(jsonDepthExceeded({ a: [1, { b: 2 }] }, 2)).toEqual({ path: ['a', 1] });
    expect(jsonDepthExceeded('text', 0)).toBeNull();
    const body = JSON.parse(`{"model":"m","messages":[{"role":"user","content":${deep(1e5)}}]}`);
    const r = jsonDepthExceeded(body, 64)!;
    expect(r.path.slice(0, 4)).toEqual(['messages', 0, 'content', 0]);
    expect(r.path).toHaveLength(64);
    // the top level counts as 1
    expect(jsonDepthExceeded(nested(64), 64)).toBeNull();
    expect(jsonDepthExceeded(nested(65), 64)?.path).toEqual(Array(64).fill(0));
  });
});

describe('previewValue', () => {
  it('is the JSON of a short value, and a long one cut at max with an ellipsis', () => {
    expect(previewValue({ a: [1, 'x', null, true] })).toBe('{"a":[1,"x",null,true]}');
    const stop = Array.from({ length: 10_000 }, (_, i) => `s${i}`);
    const p = previewValue(stop);
    expect(p).toBe(`${JSON.stringify(stop).slice(0, 200)}…`);
    expect(previewValue('y'.repeat(1e6), 10)).toBe('"yyyyyyyyy…');
  });

  it('never throws: deep nesting, cycles, bigints and functions', () => {
    expect(previewValue(nested(1e5), 8)).toBe('[[[[[[[[…');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(previewValue(cycle, 20)).toBe('{"self":{"self":{"se…');
    expect(previewValue(10n)).toBe('10');
    expect(previewValue(undefined)).toBe('undefined');
  });
});
