import { describe, expect, test } from 'vitest';
import { renderHeatmap, renderSampleCard, selectSamples, weightColor, weightScale } from './heatmap.js';
import type { SampleRecord } from './run-dir.js';

const rec = (over: Partial<SampleRecord>): SampleRecord => ({
  step: 0,
  group: 0,
  reward: 1,
  correct: true,
  advantage: 0.5,
  prompt: 'p',
  tokens: ['a'],
  weights: [1],
  spans: null,
  ...over,
});

describe('weight colours', () => {
  test('white at 1, full blue at the low end, full red at the high end', () => {
    const scale = { lo: 0.5, hi: 2 };
    expect(weightColor(1, scale)).toEqual({ background: 'rgb(255,255,255)', lightText: false });
    // 85% of the way from white to (43,108,176) and (200,40,30)
    expect(weightColor(0.5, scale)).toEqual({
      background: `rgb(${Math.round(255 - 212 * 0.85)},${Math.round(255 - 147 * 0.85)},${Math.round(255 - 79 * 0.85)})`,
      lightText: true,
    });
    expect(weightColor(2, scale).background).toBe(
      `rgb(${Math.round(255 - 55 * 0.85)},${Math.round(255 - 215 * 0.85)},${Math.round(255 - 225 * 0.85)})`,
    );
    expect(weightColor(1.5, scale).lightText).toBe(false);
  });

  test('the scale always contains 1', () => {
    expect(weightScale([rec({ weights: [1.2, 1.5] })])).toEqual({ lo: 1, hi: 1.5 });
    expect(weightScale([rec({ weights: [0.2] }), rec({ weights: [0.9] })])).toEqual({ lo: 0.2, hi: 1 });
  });
});

describe('renderHeatmap', () => {
  test('escapes token text, marks the answer span and delimiters, titles carry the weight', () => {
    const html = renderHeatmap(
      rec({
        tokens: ['<script>alert("x")</script>', '\\boxed{', '4', '2', '}', '\n'],
        weights: [1, 1, 2, 2, 1, 1],
        spans: { open: [1, 2], content: [2, 4], close: [4, 5] },
      }),
      { lo: 1, hi: 2 },
    );
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    const answer = html.indexOf('<span class="answer"');
    expect(answer).toBeGreaterThan(html.indexOf('\\boxed{'));
    expect(html.slice(answer)).toMatch(
      /^<span class="answer" title="answer content"><span [^>]*title="token 2: weight 2">4<\/span><span [^>]*>2<\/span><\/span><span class="delim"/,
    );
    expect(html).toContain('↵\n');
    // balanced spans
    expect(html.match(/<span/g)!.length).toBe(html.match(/<\/span>/g)!.length);
  });

  test('a span that ends at the last token is closed', () => {
    const html = renderHeatmap(rec({ tokens: ['a', '1'], weights: [1, 1], spans: { open: [1, 1], content: [1, 2], close: [2, 2] } }), {
      lo: 1,
      hi: 1,
    });
    expect(html.match(/<span/g)!.length).toBe(html.match(/<\/span>/g)!.length);
    expect(html).toMatch(/<span class="answer"[^>]*><span[^>]*>1<\/span><\/span><\/div>$/);
  });

  test('the card escapes the prompt', () => {
    expect(renderSampleCard(rec({ prompt: '<img src=x onerror=alert(1)>' }), { lo: 1, hi: 1 })).toContain(
      '&lt;img src=x onerror=alert(1)&gt;',
    );
  });
});

describe('selectSamples', () => {
  test('latest step first, correct and wrong alternating, then ordered by group', () => {
    const samples = [
      rec({ step: 1, group: 0, correct: true }),
      rec({ step: 2, group: 1, correct: true }),
      rec({ step: 2, group: 0, correct: true }),
      rec({ step: 2, group: 0, correct: true }),
      rec({ step: 2, group: 1, correct: false }),
      rec({ step: 1, group: 3, correct: false }),
    ];
    const got = selectSamples(samples, 4);
    expect(got).toEqual([samples[2], samples[1], samples[4], samples[5]]);
    expect(selectSamples(samples, 10, 1)).toEqual([samples[0], samples[5]]);
    expect(selectSamples(samples, 0)).toEqual([]);
  });
});
