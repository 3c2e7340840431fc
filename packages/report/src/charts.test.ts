import { afterEach, describe, expect, test, vi } from 'vitest';
import { padDomain, renderSvg } from './charts.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('renderSvg', () => {
  test('renders a standalone SVG without a DOM or canvas', async () => {
    const svg = await renderSvg({
      width: 200,
      height: 100,
      data: {
        values: [
          { a: 1, b: 2 },
          { a: 2, b: 3 },
        ],
      },
      mark: 'line',
      encoding: { x: { field: 'a', type: 'quantitative' }, y: { field: 'b', type: 'quantitative' } },
    });
    expect(svg).toMatch(/^<svg [^>]*width="\d+" height="\d+"/);
    expect(svg).toContain('<path');
    expect(svg.endsWith('</svg>')).toBe(true);
  });

  test('chart warnings go to the callback, never to the console', async () => {
    const consoleSpies = (['log', 'warn', 'error', 'info'] as const).map((m) => vi.spyOn(console, m).mockImplementation(() => {}));
    const warnings: string[] = [];
    // `shape` means nothing to a bar: vega-lite drops it with a warning
    await renderSvg(
      {
        data: { values: [{ a: 1, b: 2 }] },
        mark: 'bar',
        encoding: { x: { field: 'a', type: 'ordinal' }, y: { field: 'b', type: 'quantitative' }, shape: { field: 'a', type: 'nominal' } },
      },
      (m) => warnings.push(m),
    );
    expect(warnings.some((w) => w.includes('shape'))).toBe(true);
    for (const spy of consoleSpies) expect(spy).not.toHaveBeenCalled();
  });

  test('text in the data is escaped in the SVG', async () => {
    const svg = await renderSvg({
      data: { values: [{ a: '<script>x</script>', b: 1 }] },
      mark: 'bar',
      encoding: { x: { field: 'a', type: 'nominal' }, y: { field: 'b', type: 'quantitative' } },
    });
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('&lt;script&gt;');
  });
});

describe('padDomain', () => {
  test('only a single value gets a domain around it', () => {
    expect(padDomain([])).toBeUndefined();
    expect(padDomain([1, 2])).toBeUndefined();
    expect(padDomain([0, 0])).toEqual([-1, 1]);
    expect(padDomain([5])).toEqual([4.5, 5.5]);
    expect(padDomain([-2])).toEqual([-2.2, -1.8]);
  });
});
