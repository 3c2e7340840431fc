import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { OUTCOME_COLORS } from './charts.js';
import { ReportError } from './errors.js';
import { pairedDifference } from './paired-difference.js';
import { readRunDir } from './run-dir.js';
import type { SampleRecord } from './run-dir.js';
import { renderReport, writeReport } from './report.js';
import { syntheticCheckpointWeights, writeSyntheticRun } from './test-utils/synthetic-run.js';
import { reasoningProfiles } from './checkpoint-stats.js';

let root: string;
let run: Awaited<ReturnType<typeof writeSyntheticRun>>;
let html: string;
let result: Awaited<ReturnType<typeof writeReport>>;
const EVIL_METRIC = '<script>alert(2)</script>';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rlvr-report-'));
  run = await writeSyntheticRun(join(root, 'run'), { injectTokens: ['<script>alert("x")</script>', '\n'], extraMetric: EVIL_METRIC });
  result = await writeReport(run.dir);
  html = await readFile(join(run.dir, 'report.html'), 'utf8');
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** `text` contains `part`, failing with a short message instead of a megabyte diff. */
function expectIn(text: string, part: string): void {
  expect(text.includes(part), `expected the page to contain ${JSON.stringify(part)}`).toBe(true);
}

/** No match of `re` in `text`; on failure shows the match and its surroundings only. */
function expectNoMatch(text: string, re: RegExp): void {
  const m = re.exec(text);
  expect(m === null ? null : text.slice(Math.max(0, m.index - 80), m.index + 80)).toBeNull();
}

/** The inner HTML of `<figure data-chart="id">`. */
function figure(page: string, id: string): string {
  const m = new RegExp(`<figure class="chart" data-chart="${id}">([\\s\\S]*?)</figure>`).exec(page);
  if (m === null) throw new Error(`no figure ${id}`);
  return m[1]!;
}

/** Rows of `<table data-table="name">` as arrays of the exact `data-value`s (null for `–`). */
function tableValues(page: string, name: string): (number | null)[][] {
  const table = new RegExp(`<table data-table="${name}">([\\s\\S]*?)</table>`).exec(page)![1]!;
  return [...table.matchAll(/<tr[^>]*>(.*?)<\/tr>/g)]
    .slice(1)
    .map((r) => [...r[1]!.matchAll(/<td(?: data-value="([^"]*)")?>/g)].map((c) => (c[1] === undefined ? null : Number(c[1]))));
}

describe('report of a full run', () => {
  test('is written to RUN_DIR/report.html and every chart is a non-empty SVG', () => {
    expect(result.path).toBe(join(run.dir, 'report.html'));
    expect(result.bytes).toBe(Buffer.byteLength(html));
    expect(html.startsWith('<!doctype html>')).toBe(true);
    const expected = [
      'reward',
      'accuracy',
      'loss',
      'kl',
      'entropy',
      'clip',
      'grad_norm',
      'lr',
      'frac_reward_zero_std',
      'completions',
      'tokens_per_s',
      'weight-histogram',
      'position-profile',
      'weights-mean',
      'weights-std',
    ];
    // a constant curve beside a varying one stays on its chart (kl/ref = 0 beside kl/approx)
    expect(figure(html, 'kl')).toContain('kl/ref');
    for (const id of expected) {
      const f = figure(html, id);
      const svg = /<svg[^>]*width="(\d+)" height="(\d+)"[^>]*>([\s\S]*)<\/svg>/.exec(f);
      expect(svg, id).not.toBeNull();
      expect(Number(svg![1])).toBeGreaterThan(100);
      expect(Number(svg![2])).toBeGreaterThan(100);
      expect(svg![3]!.match(/<path/g)!.length, id).toBeGreaterThan(3);
      expect(f).not.toContain('nodata');
    }
    expect((html.match(/<svg/g) ?? []).length).toBe(result.charts);
    // the custom metrics get charts of their own
    expectIn(html, 'data-chart="metric-0"><figcaption>custom/unknown_metric</figcaption><svg');
  });

  test('correct and wrong keep one colour each in every chart; no other series uses either', () => {
    const colours = (id: string): Set<string> =>
      new Set([...figure(html, id).matchAll(/(?:fill|stroke)="(#[0-9a-f]{6})"/gi)].map((m) => m[1]!.toLowerCase()));
    const outcome = Object.values(OUTCOME_COLORS);
    for (const id of ['weights-mean', 'weights-std', 'weight-histogram', 'position-profile']) {
      for (const c of outcome) expect(colours(id), id).toContain(c);
    }
    // each series' legend symbol: correct and wrong series in their outcome's colour, in every weights chart
    for (const id of ['weights-mean', 'weights-std']) {
      const legend = [
        ...figure(html, id).matchAll(
          /role-legend-symbol[^>]*><path[^>]*fill="(#[0-9a-f]{6})"[^>]*\/><\/g><g class="mark-text role-legend-label"[^>]*><text[^>]*>([^<]*)<\/text>/g,
        ),
      ].map((m) => [m[2]!, m[1]!]);
      expect(
        legend.map(([label]) => label.split('/')[1]),
        id,
      ).toEqual(['correct', 'wrong']);
      for (const [label, colour] of legend)
        expect(colour, label).toBe(label.includes('/correct/') ? OUTCOME_COLORS.correct : OUTCOME_COLORS.wrong);
    }
    const ids = [...html.matchAll(/data-chart="([^"]+)"/g)].map((m) => m[1]!);
    for (const id of ids.filter((i) => !/^weights-|^weight-histogram$|^position-profile$/.test(i))) {
      for (const c of outcome) expect(colours(id).has(c), `${id} uses ${c}`).toBe(false);
    }
    expectIn(html, `.badge.ok { background: ${OUTCOME_COLORS.correct}; }`);
    expectIn(html, `.badge.bad { background: ${OUTCOME_COLORS.wrong}; }`);
  });

  test('flat charts are one line each under their section', () => {
    const section = (id: string) =>
      html.slice(html.indexOf(`<section id="${id}">`), html.indexOf('</section>', html.indexOf(`<section id="${id}">`)));
    expectIn(
      section('rollouts'),
      '<li data-flat="completions-clipped"><span class="flat-title">Completions cut by the token limit</span>: completions/clipped_ratio = 0 at all 60 logged steps</li>',
    );
    expect(html).not.toContain('data-chart="completions-clipped"');
  });

  test('the summary gives the headline of rlvr train: accuracy with the paired s.e., pass@n, greedy', () => {
    const summaryHtml = html.slice(html.indexOf('<section id="summary">'), html.indexOf('<section id="reward">'));
    const [first, last] = [run.evals[0]!, run.evals.at(-1)!];
    const d = pairedDifference(first.correct, last.correct, 4);
    const g = pairedDifference(first.greedyCorrect!, last.greedyCorrect!, 1);
    const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
    const pts = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
    expectIn(
      summaryHtml,
      `<tr><th>held-out accuracy (20 problems, mean of 4 samples)</th><td>${pct(first.accuracy)} at step 0 -&gt; ${pct(last.accuracy)} at step 59 (${pts(d.mean)} points, paired s.e. ${(100 * d.standardError).toFixed(1)})</td></tr>`,
    );
    expectIn(summaryHtml, `<tr><th>pass@4</th><td>${pct(first.passAtN)} -&gt; ${pct(last.passAtN)}</td></tr>`);
    expectIn(
      summaryHtml,
      `<tr><th>greedy accuracy</th><td>${pct(first.greedyAccuracy!)} -&gt; ${pct(last.greedyAccuracy!)} (${pts(g.mean)} points, paired s.e. ${(100 * g.standardError).toFixed(1)})</td></tr>`,
    );
    // rates as percentages, not fractions
    for (const row of summaryHtml.match(/<tr><th>[^<]*(accuracy|pass@)[^<]*<\/th><td>[^<]*<\/td><\/tr>/g)!)
      expect(row).not.toMatch(/\b0\.\d+ at step/);
  });

  test('the summary compares reward/mean over the first and last windows of logged steps, naming them', () => {
    const summaryHtml = html.slice(html.indexOf('<section id="summary">'), html.indexOf('<section id="reward">'));
    const r = run.metrics.filter((m) => typeof m['reward/mean'] === 'number').map((m) => ({ step: m.step, v: m['reward/mean'] as number }));
    // 60 logged steps: windows of 6 (a tenth)
    expect(r).toHaveLength(60);
    const mean = (xs: typeof r) => xs.reduce((a, x) => a + x.v, 0) / xs.length;
    const best = r.reduce((b, x) => (x.v > b.v ? x : b));
    const n4 = (x: number) => String(Number(x.toPrecision(4)));
    expectIn(
      summaryHtml,
      `<tr><th>reward/mean</th><td>${n4(mean(r.slice(0, 6)))} over steps ${r[0]!.step}–${r[5]!.step} -&gt; ${n4(mean(r.slice(-6)))} over steps ${r.at(-6)!.step}–${r.at(-1)!.step} (means over the first and last 6 logged steps); best step ${n4(best.v)} at step ${best.step}</td></tr>`,
    );
    expect(summaryHtml).toMatch(/<tr><th>metric names in metrics\.jsonl<\/th><td>\d+<\/td><\/tr>/);
    expect(summaryHtml).not.toContain('metrics logged');
  });

  test('the held-out chart has a ±1 s.e. bar per evaluation and curve, from evals.jsonl', () => {
    const f = figure(html, 'accuracy');
    expectIn(f, 'Bars: ±1 s.e. over problems (the SD of per-problem accuracy / √problems), from evals.jsonl.');
    const curves = ['accuracy', 'accuracy/greedy'].filter((m) => run.metrics.some((r) => typeof r[m] === 'number'));
    const rules = f.match(/<line /g) ?? [];
    const bars = run.evals.length * curves.length;
    // the bars are the chart's only lines beyond its axes' ticks and grid
    expect(f).toContain('role-mark');
    expect(rules.length).toBeGreaterThanOrEqual(bars);
  });

  test('y-axis titles are short names with units, never the chart title', () => {
    const yTitle = (id: string) =>
      /aria-label="Y-axis titled '([^']*)'/.exec(figure(html, id))?.[1] ??
      /<g class="mark-group role-axis" aria-label="Y-axis[^"]*"[\s\S]*?role-title[\s\S]*?<text[^>]*>([^<]*)<\/text>/.exec(
        figure(html, id),
      )?.[1];
    expect(yTitle('completions')).toBe('tokens');
    expect(yTitle('clip')).toBe('fraction of tokens');
    expect(yTitle('weights-mean')).toBe('token weight mean');
  });

  test('the whole-completion profile says what it measures; the reference U-shape over checkpoints pools the reasoning tokens only', () => {
    expect(figure(html, 'position-profile')).toContain(
      '<figcaption>Whole completion: mean token weight against t/len (answer content forced to w_max, post-answer tokens included)</figcaption>',
    );
    const f = figure(html, 'checkpoint-profile');
    expect(f).toContain('<figcaption>Reasoning tokens: mean GRAIL weight against t/(R−1), per checkpoint</figcaption>');
    expect(/<svg[\s\S]*<path/.test(f)).toBe(true);
    const records = syntheticCheckpointWeights(run.metrics);
    const steps = [...new Set(records.map((r) => r.step))];
    expect(steps.length).toBeGreaterThan(2);
    // one line per checkpoint in the legend, the table as computed here, and no bin pulled to w_max (5) by the answer content
    for (const s of steps) expect(f).toContain(`step ${s}`);
    const rows = tableValues(html, 'checkpoint-profile');
    const mine = reasoningProfiles(records, 20);
    expect(rows.map((r) => r.slice(0, 3))).toEqual(mine.map((p) => [p.step, 5, 1]));
    for (const [k, p] of mine.entries()) for (const [b, bin] of p.bins.entries()) expect(rows[k]![3 + b]).toBeCloseTo(bin.mean!, 10);
    expect(Math.max(...rows.flatMap((r) => r.slice(3) as number[]))).toBeLessThan(1.5);
    // the U deepens over checkpoints: the ends rise and the middle sinks from the first to the last
    expect(rows.at(-1)![3]! - rows.at(-1)![12]!).toBeGreaterThan(rows[0]![3]! - rows[0]![12]!);
    // the heatmap: each shown rollout has one line per checkpoint, its answer content boxed
    const h = figure(html, 'checkpoint-heatmap');
    expect(h.match(/<article class="sample" data-rollout=/g)).toHaveLength(6);
    expect(h.match(/<div class="ckpt-row" data-step=/g)).toHaveLength(6 * steps.length);
    expect(h).toContain('title="token 9: weight 5"');
  });

  test('the U-shape table holds the per-bin means computed here from samples.jsonl', () => {
    const rows = tableValues(html, 'position-profile');
    const bins = 20;
    expect(rows).toHaveLength(bins);
    for (const [outcome, col] of [
      [true, 3],
      [false, 6],
    ] as const) {
      const mine = uShapeByHand(
        run.samples.filter((s) => s.correct === outcome),
        bins,
      );
      for (let b = 0; b < bins; b++) {
        expect(rows[b]![0]).toBe(b);
        expect(rows[b]![1]).toBeCloseTo(b / bins, 12);
        expect(rows[b]![col]).toBeCloseTo(mine.mean[b]!, 10);
        expect(rows[b]![col + 1]).toBeCloseTo(mine.sem[b]!, 10);
        expect(rows[b]![col + 2]).toBe(mine.n[b]);
      }
      // and the synthetic profile really is a U: both ends above the middle
      expect(mine.mean[0]!).toBeGreaterThan(mine.mean[10]! + 0.2);
      expect(mine.mean[19]!).toBeGreaterThan(mine.mean[10]! + 0.2);
    }
  });

  test('the histogram table counts every token once, by outcome', () => {
    const rows = tableValues(html, 'weight-histogram');
    expect(rows).toHaveLength(40);
    const all = run.samples.flatMap((s) => s.weights);
    const lo = Math.min(...all);
    const hi = Math.max(...all);
    expect(rows[0]![0]).toBe(lo);
    expect(rows[39]![1]).toBe(hi);
    for (const [outcome, col] of [
      [true, 2],
      [false, 4],
    ] as const) {
      const ws = run.samples.filter((s) => s.correct === outcome).flatMap((s) => s.weights);
      rows.forEach((r, i) => {
        const inBin = ws.filter((w) => w >= r[0]! && (i === 39 ? w <= r[1]! : w < r[1]!)).length;
        expect(r[col]).toBe(inBin);
        expect(r[col + 1]).toBeCloseTo(inBin / ws.length, 12);
      });
    }
  });

  test('untrusted text is escaped everywhere: tokens, prompts, config, metric names', () => {
    expectNoMatch(html, /<script/i);
    expectIn(html, '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expectIn(html, '&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expectIn(html, '&lt;b&gt;the&lt;/b&gt;');
    expectIn(html, '<figcaption>&lt;script&gt;alert(2)&lt;/script&gt;</figcaption><svg');
    expectNoMatch(html, /\son[a-z]+=/i);
  });

  test('references nothing outside the page: no scripts, no src, only #fragment links', () => {
    expectNoMatch(html, /\ssrc\s*=/i);
    const hrefs = [...html.matchAll(/href\s*=\s*["']?([^"'\s>]*)/gi)].map((m) => m[1]!);
    expect(hrefs.length).toBeGreaterThan(0);
    for (const h of hrefs) expect(h).toMatch(/^#[a-z]+$/);
    expectNoMatch(html, /@import|url\(\s*["']?(https?:)?\/\//i);
    expectNoMatch(html, /(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
  });

  test('SVG ids do not collide between charts', () => {
    const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('heatmaps show samples of the latest step with both outcomes and the answer boxed', () => {
    const samples = html.slice(html.indexOf('<section id="samples">'), html.indexOf('<section id="other">'));
    expect(samples.match(/<article class="sample">/g)).toHaveLength(12);
    expectIn(samples, 'badge ok');
    expectIn(samples, 'badge bad');
    expect(samples.match(/step (\d+) · /g)!.every((m) => m === 'step 59 · ')).toBe(true);
    expectIn(samples, '<span class="answer" title="answer content">');
    expectIn(samples, 'class="legend-bar"');
  });

  test('a step range restricts the weight figures to those samples', async () => {
    const data = await readRunDir(run.dir);
    const page = (await renderReport(data, { weightsFromStep: 40, weightsToStep: 40 })).html;
    const rows = tableValues(page, 'weight-histogram');
    const at40 = run.samples.filter((s) => s.step === 40);
    const tokens = (c: boolean): number => at40.filter((s) => s.correct === c).reduce((n, s) => n + s.weights.length, 0);
    expect(rows.reduce((n, r) => n + r[2]!, 0)).toBe(tokens(true));
    expect(rows.reduce((n, r) => n + r[4]!, 0)).toBe(tokens(false));
    expectIn(page, `over ${at40.length} sampled rollouts`);
    expectIn(page, 'at steps 40–40.');
    const none = (await renderReport(data, { weightsFromStep: 1000 })).html;
    expectIn(figure(none, 'weight-histogram'), 'no data for token weights (samples.jsonl has no tokens at steps 1000–end)');
  });

  test('rendering prints nothing (library code takes no console)', async () => {
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) => vi.spyOn(console, m).mockImplementation(() => {}));
    const write = vi.spyOn(process.stderr, 'write');
    try {
      const data = await readRunDir(run.dir);
      await renderReport({ ...data, metrics: [...data.metrics, { step: 60, entropy: 1e300, lr: 0 }] });
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
      expect(write).not.toHaveBeenCalled();
    } finally {
      for (const spy of spies) spy.mockRestore();
      write.mockRestore();
    }
  });

  test('the same run renders to the same page', async () => {
    const data = await readRunDir(run.dir);
    const at = new Date('2026-01-01T00:00:00Z');
    const a = await renderReport(data, {}, at);
    const b = await renderReport(data, {}, at);
    expect(a.html).toBe(b.html);
  });
});

/** Independent U-shape: rollouts' means over tokens with b/bins <= t/len < (b+1)/bins, then mean and s.e. over rollouts. */
function uShapeByHand(samples: SampleRecord[], bins: number): { mean: (number | null)[]; sem: (number | null)[]; n: number[] } {
  const per: number[][] = Array.from({ length: bins }, () => []);
  for (const s of samples) {
    const len = s.weights.length;
    for (let b = 0; b < bins; b++) {
      const ws = s.weights.filter((_, t) => t / len >= b / bins - 1e-12 && t * bins < (b + 1) * len);
      const ws2 = s.weights.filter((_, t) => t * bins >= b * len && t * bins < (b + 1) * len);
      expect(ws).toEqual(ws2);
      if (ws2.length > 0) per[b]!.push(ws2.reduce((x, y) => x + y, 0) / ws2.length);
    }
  }
  const mean = per.map((m) => (m.length === 0 ? null : m.reduce((x, y) => x + y, 0) / m.length));
  const sem = per.map((m, b) => {
    if (m.length < 2) return null;
    const mu = mean[b]!;
    return Math.sqrt(m.reduce((x, y) => x + (y - mu) ** 2, 0) / (m.length - 1) / m.length);
  });
  return { mean, sem, n: per.map((m) => m.length) };
}

describe('reports of partial runs', () => {
  test('metrics only: the weight charts and samples say there is no data', async () => {
    const dir = join(root, 'metrics-only');
    await mkdir(dir);
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0,"reward/mean":0.1}\n{"step":1,"reward/mean":0.3}\n');
    const r = await writeReport(dir);
    const page = await readFile(r.path, 'utf8');
    expect(figure(page, 'reward')).toContain('<svg');
    expect(figure(page, 'accuracy')).toContain('<p class="nodata">no data for accuracy (not in metrics.jsonl)</p>');
    expect(figure(page, 'kl')).toContain('no data for kl/*');
    expect(figure(page, 'weight-histogram')).toContain('no data for token weights (no samples.jsonl in the run directory)');
    expect(figure(page, 'position-profile')).toContain('no data for token weights by position');
    expect(figure(page, 'checkpoint-profile')).toContain('no checkpoint-weights.jsonl in the run directory');
    expectIn(page, 'no data for sample completions (no samples.jsonl in the run directory)');
    expectIn(page, 'no data for config (no config.json in the run directory)');
    expect(r.charts).toBe(1);
    expect(r.warnings).toContain('no data for accuracy in metrics.jsonl');
  });

  test('a single logged step: one line per metric, no chart, no NaN', async () => {
    const dir = join(root, 'one-step');
    await mkdir(dir);
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0,"reward/mean":0.5,"accuracy":0.3,"entropy":0}\n');
    const r = await writeReport(dir);
    const page = await readFile(r.path, 'utf8');
    expect(r.charts).toBe(0);
    expectNoMatch(page, /NaN/);
    expectIn(
      page,
      '<li data-flat="accuracy"><span class="flat-title">Held-out accuracy</span>: accuracy = 0.3 at its one logged step</li>',
    );
    expectIn(page, '<tr><th>held-out accuracy</th><td>30.0% at step 0</td></tr>');
  });

  test('a long run is averaged into maxPoints per curve', async () => {
    const dir = join(root, 'long');
    await mkdir(dir);
    const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ step: i, 'reward/mean': i % 7, entropy: 1 + (i % 3) }));
    await writeFile(join(dir, 'metrics.jsonl'), lines.join('\n'));
    const page = (await renderReport(await readRunDir(dir), { maxPoints: 100 })).html;
    expect(figure(page, 'entropy')).toContain('3000 points per curve, averaged into 100 buckets.');
  });
});

describe('errors', () => {
  test('an empty metrics.jsonl is an error naming it, and no page is written', async () => {
    const dir = join(root, 'empty');
    await mkdir(dir);
    await writeFile(join(dir, 'metrics.jsonl'), '\n\n');
    const err = (await writeReport(dir).catch((e: unknown) => e)) as ReportError;
    expect(err).toBeInstanceOf(ReportError);
    expect(err.code).toBe('no_metrics');
    expect(err.message).toBe(`${join(dir, 'metrics.jsonl')}: no records: the run has logged nothing to report yet`);
    expect(await readdir(dir)).toEqual(['metrics.jsonl']);
  });

  test('bad options name the field', async () => {
    const err = await writeReport(run.dir, { positionBins: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReportError);
    expect((err as ReportError).code).toBe('invalid_options');
    expect((err as Error).message).toMatch(/^invalid report options: positionBins: .*(got 1)/);
    await expect(writeReport(run.dir, { nope: 1 } as never)).rejects.toThrow('unknown key: nope');
  });

  test('an output directory that is not a directory: one-line error, nothing written', async () => {
    const before = await readdir(run.dir);
    const out = join(run.dir, 'config.json', 'report.html');
    const err = (await writeReport(run.dir, { out }).catch((e: unknown) => e)) as ReportError;
    expect(err.code).toBe('write_failed');
    expect(err.message).toBe(`${out}: cannot write: ${join(run.dir, 'config.json')} is not a directory`);
    expect(err.message).not.toContain('\n');
    expect(await readdir(run.dir)).toEqual(before);
  });

  test('a missing output directory is not created', async () => {
    const out = join(root, 'no', 'such', 'report.html');
    await expect(writeReport(run.dir, { out })).rejects.toThrow(`directory ${join(root, 'no', 'such')} does not exist`);
    await expect(readdir(join(root, 'no'))).rejects.toThrow();
  });

  test('an output path that is a directory: nothing written', async () => {
    const out = join(root, 'outdir');
    await mkdir(out);
    const before = await readdir(root);
    await expect(writeReport(run.dir, { out })).rejects.toThrow(`${out}: cannot write: ${out} is a directory`);
    expect(await readdir(root)).toEqual(before);
    expect(await readdir(out)).toEqual([]);
  });

  test.skipIf(process.getuid?.() === 0)('a read-only output directory (skipped as root, who may write anywhere)', async () => {
    const dir = join(root, 'ro');
    await mkdir(dir);
    await chmod(dir, 0o555);
    try {
      await expect(writeReport(run.dir, { out: join(dir, 'r.html') })).rejects.toThrow(/is not writable \(EACCES\)/);
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await chmod(dir, 0o755);
    }
  });

  test('a bad samples line stops the report before anything is written', async () => {
    const dir = join(root, 'bad');
    await mkdir(dir);
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0}\n');
    await writeFile(
      join(dir, 'samples.jsonl'),
      '{"step":0,"group":0,"reward":1,"correct":true,"advantage":0,"prompt":"","tokens":["a"],"weights":["1"],"spans":null}\n',
    );
    await expect(writeReport(dir)).rejects.toThrow(`${join(dir, 'samples.jsonl')}:1, field weights.0: `);
    expect(await readdir(dir)).toEqual(['metrics.jsonl', 'samples.jsonl']);
  });

  test('a bad evals.jsonl line stops the report too', async () => {
    const dir = join(root, 'bad-evals');
    await mkdir(dir);
    await writeFile(join(dir, 'metrics.jsonl'), '{"step":0,"accuracy":0.5}\n');
    await writeFile(join(dir, 'evals.jsonl'), '{"step":0,"accuracy":0.5,"passAtN":1,"n":2,"problems":2,"correct":[1]}\n');
    await expect(writeReport(dir)).rejects.toThrow(`${join(dir, 'evals.jsonl')}:1, field correct: has 1 counts for 2 problems`);
    expect(await readdir(dir)).toEqual(['evals.jsonl', 'metrics.jsonl']);
  });
});
