import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { syntheticCredit } from '../test-utils/synthetic-credit.js';
import type { CreditInput } from './input.js';
import { creditMetrics } from './metrics.js';
import { renderCreditPage, writeCreditPage } from './page.js';

/** The exact value a table cell carries, by table, row attribute and column. */
function cellValue(html: string, tableId: string, rowAttr: string, column: number): string | undefined {
  const table = html.slice(html.indexOf(`data-table="${tableId}"`));
  const row = table.slice(table.indexOf(rowAttr), table.indexOf('</tr>', table.indexOf(rowAttr)));
  return [...row.matchAll(/<td( data-value="([^"]*)")?[^>]*>/g)].map((m) => m[2])[column];
}

describe('renderCreditPage', () => {
  const input = syntheticCredit(240);
  // a method name that must be escaped wherever it appears
  const hostile: CreditInput = { ...input, methods: [...input.methods, { ...input.methods[1]!, name: '<script>x</script>' }] };
  const report = creditMetrics(hostile, { resamples: 200 });

  test('every method has its charts, the tables carry the report figures, names are escaped', { timeout: 120_000 }, async () => {
    const { html, charts } = await renderCreditPage(report, { title: 'synthetic', subtitle: 'batch of 240' });
    // one AUROC chart, two profiles a method
    expect(charts).toBe(1 + 2 * report.methods.length);
    expect(html.match(/<svg/g)!.length).toBe(charts);
    for (const m of ['uniform', 'blame', 'gate']) {
      expect(html).toContain(`data-chart="error-profile-${m}"`);
      expect(html).toContain(`data-chart="correct-profile-${m}"`);
    }
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt;');
    // nothing to fetch
    expect(html).not.toMatch(/@import|url\(\s*["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
    const blame = report.methods.find((m) => m.name === 'blame')!;
    // AUROC is the third cell after the scored count and sits with its CI
    expect(Number(cellValue(html, 'credit-metrics', 'data-method="blame"', 1))).toBe(blame.wrong.auroc.mean);
    expect(html).toContain(`data-lo="${blame.wrong.auroc.ci![0]}" data-hi="${blame.wrong.auroc.ci![1]}"`);
    const pair = report.pairs.find((p) => p.a === 'uniform' && p.b === 'blame' && p.metric === 'auroc')!;
    expect(Number(cellValue(html, 'credit-pairs', 'data-pair="uniform|blame|auroc"', 2))).toBe(pair.difference.mean);
    expect(Number(cellValue(html, 'credit-pairs', 'data-pair="uniform|blame|auroc"', 4))).toBe(pair.test.pT);
    // the counts: unlabelled and first-line rollouts are shown, not dropped
    expect(Number(cellValue(html, 'credit-counts', 'data-status="unlabelled"', 0))).toBe(report.counts.status.unlabelled);
    expect(Number(cellValue(html, 'credit-degenerate', 'data-method="gate"', 0))).toBe(report.methods[2]!.degenerate.rollouts);
    expect(html).toContain('unadjusted');
  });

  test('a method without scored or correct rollouts gets "no data" notes, not an empty chart', { timeout: 120_000 }, async () => {
    const only = syntheticCredit(40);
    const rollouts = only.rollouts.map((r) => ({ ...r, correct: false, label: 'unlabelled' as const }));
    const { html, charts } = await renderCreditPage(creditMetrics({ ...only, rollouts }, { resamples: 100 }));
    expect(charts).toBe(1);
    expect(html).toContain('no data for uniform&#39;s error-relative profile (no scored wrong rollout)');
    expect(html).toContain('no data for blame&#39;s correct-rollout profile (no correct rollout)');
  });

  test('a p-value that underflows to 0 is shown as below 1e-300, never as 0', { timeout: 120_000 }, async () => {
    const r = structuredClone(report);
    r.methods[1]!.midChain.difference.welch.p = 0;
    r.methods[1]!.uShape.test.pT = 3.2e-7;
    const { html } = await renderCreditPage(r);
    const row = html.slice(html.indexOf('data-table="credit-hypotheses"'));
    const blame = row.slice(row.indexOf('data-method="blame"'), row.indexOf('</tr>', row.indexOf('data-method="blame"')));
    expect(blame).toContain('<td data-value="0">&lt; 1e-300</td>');
    expect(blame).toContain('<td data-value="3.2e-7">3.2e-7</td>');
  });

  test('writeCreditPage writes the page whole', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'credit-page-'));
    const { bytes } = await writeCreditPage(join(dir, 'credit.html'), report);
    expect(readFileSync(join(dir, 'credit.html')).length).toBe(bytes);
  });
});
