import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { StopMatcher } from './stop-matcher.js';

const te = new TextEncoder();
const td = new TextDecoder();

describe('StopMatcher', () => {
  it('finds a stop string split across pieces and a multi-byte character split across pieces', () => {
    const m = new StopMatcher(['\n\n', 'é!']);
    const pieces = [te.encode('ab'), te.encode('c\n'), te.encode('\nde')];
    expect(pieces.map((p) => m.push(p))).toEqual([false, false, true]);
    expect(td.decode(m.text())).toBe('abc');
    const e = te.encode('xé!'); // 'é' is two bytes: split it
    const m2 = new StopMatcher(['é!']);
    expect([m2.push(e.subarray(0, 2)), m2.push(e.subarray(2, 3)), m2.push(e.subarray(3))]).toEqual([false, false, true]);
    expect(td.decode(m2.text())).toBe('x');
  });

  it('reports the earliest of several stop strings completed by the same piece', () => {
    const m = new StopMatcher(['cd', 'bcde']);
    expect(m.push(te.encode('abcdef'))).toBe(true);
    expect(td.decode(m.text())).toBe('a'); // 'bcde' starts first
  });

  it('property: the first piece that completes any stop string is where indexOf first finds one', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[ab]{0,4}$/), { maxLength: 12 }),
        fc.array(fc.stringMatching(/^[ab]{1,3}$/), { minLength: 1, maxLength: 3 }),
        (pieces, stops) => {
          const m = new StopMatcher(stops);
          let hit = -1;
          pieces.forEach((p, i) => {
            if (m.push(te.encode(p)) && hit < 0) hit = i;
          });
          // reference: grow the text and search it whole after each piece
          let text = '';
          let refHit = -1;
          let refAt = -1;
          for (let i = 0; i < pieces.length && refHit < 0; i++) {
            text += pieces[i];
            const found = stops.map((s) => text.indexOf(s)).filter((x) => x >= 0);
            if (found.length > 0) [refHit, refAt] = [i, Math.min(...found)];
          }
          expect(hit).toBe(refHit);
          if (refHit >= 0) expect(td.decode(m.text())).toBe(text.slice(0, refAt));
        },
      ),
      { numRuns: 500 },
    );
  });
});
