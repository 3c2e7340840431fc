/**
 * Sample completions as token heatmaps: each token a `<span>` whose background
 * encodes its weight on a diverging scale centred on 1 (the weight that leaves
 * the advantage unchanged): blue below 1, white at 1, red above 1. The answer
 * content is boxed and its delimiters underlined. No script: the exact weight
 * of a token is in its `title` (shown on hover).
 */
import { escapeHtml, formatNumber } from './html.js';
import type { CheckpointWeightRecord, SampleRecord } from './run-dir.js';

/** The weight range a heatmap's colours span; always contains 1. */
export interface WeightScale {
  lo: number;
  hi: number;
}

const LOW_RGB = [43, 108, 176] as const; // blue: weight below 1
const HIGH_RGB = [200, 40, 30] as const; // red: weight above 1
/** Strongest mix with the base colour, so text stays readable at the ends. */
const MAX_MIX = 0.85;

/** The colour scale for `samples`: from min(1, smallest weight) to max(1, largest weight). */
export function weightScale(samples: readonly Pick<SampleRecord, 'weights'>[]): WeightScale {
  let lo = 1;
  let hi = 1;
  for (const s of samples) {
    for (const w of s.weights) {
      if (w < lo) lo = w;
      if (w > hi) hi = w;
    }
  }
  return { lo, hi };
}

/** Background colour of weight `w` and whether text on it should be light. */
export function weightColor(w: number, scale: WeightScale): { background: string; lightText: boolean } {
  let t = 0;
  let rgb: readonly number[] = HIGH_RGB;
  if (w > 1 && scale.hi > 1) t = Math.min(1, (w - 1) / (scale.hi - 1));
  else if (w < 1 && scale.lo < 1) {
    t = Math.min(1, (1 - w) / (1 - scale.lo));
    rgb = LOW_RGB;
  }
  const mix = t * MAX_MIX;
  const c = rgb.map((v) => Math.round(255 + (v - 255) * mix));
  return { background: `rgb(${c[0]},${c[1]},${c[2]})`, lightText: mix > 0.55 };
}

/**
 * Pick up to `max` samples to show: those of `step` if given, otherwise from the
 * latest logged step backwards; correct and wrong rollouts alternate so both show.
 * Returned in (step descending, group, file order).
 */
export function selectSamples(samples: readonly SampleRecord[], max: number, step?: number): SampleRecord[] {
  const pool = samples
    .map((s, i) => ({ s, i }))
    .filter(({ s }) => step === undefined || s.step === step)
    .sort((a, b) => b.s.step - a.s.step || a.i - b.i);
  const correct = pool.filter(({ s }) => s.correct);
  const wrong = pool.filter(({ s }) => !s.correct);
  const picked: { s: SampleRecord; i: number }[] = [];
  for (let k = 0; picked.length < max && (k < correct.length || k < wrong.length); k++) {
    if (k < correct.length) picked.push(correct[k]!);
    if (k < wrong.length && picked.length < max) picked.push(wrong[k]!);
  }
  return picked.sort((a, b) => b.s.step - a.s.step || a.s.group - b.s.group || a.i - b.i).map(({ s }) => s);
}

/** Visible text of a token: newlines get a return mark, an empty token a dot, so every token has a box. */
function tokenText(token: string): string {
  if (token === '') return '·';
  return escapeHtml(token).replace(/\n/g, '↵\n');
}

/** One completion as a heatmap. */
export function renderHeatmap(sample: Pick<SampleRecord, 'tokens' | 'weights' | 'spans'>, scale: WeightScale): string {
  const spans = sample.spans;
  const parts: string[] = [];
  // Span opening/closing tags at token boundaries; ranges are ordered and disjoint (checked on read).
  const opens = new Map<number, string>();
  const closes = new Map<number, number>();
  if (spans !== null) {
    for (const [kind, [s, e]] of [
      ['delim', spans.open],
      ['answer', spans.content],
      ['delim', spans.close],
    ] as const) {
      if (e <= s) continue;
      opens.set(s, kind);
      closes.set(e, (closes.get(e) ?? 0) + 1);
    }
  }
  for (let t = 0; t < sample.tokens.length; t++) {
    for (let k = closes.get(t) ?? 0; k > 0; k--) parts.push('</span>');
    const kind = opens.get(t);
    if (kind !== undefined) parts.push(`<span class="${kind}" title="${kind === 'answer' ? 'answer content' : 'answer delimiter'}">`);
    const w = sample.weights[t]!;
    const { background, lightText } = weightColor(w, scale);
    const cls = lightText ? 'tok light' : 'tok';
    parts.push(
      `<span class="${cls}" style="background:${background}" title="token ${t}: weight ${formatNumber(w, 4)}">${tokenText(sample.tokens[t]!)}</span>`,
    );
  }
  for (let k = closes.get(sample.tokens.length) ?? 0; k > 0; k--) parts.push('</span>');
  return `<div class="completion">${parts.join('')}</div>`;
}

/** A card for one sample: its header line, prompt and heatmap. */
export function renderSampleCard(sample: SampleRecord, scale: WeightScale): string {
  const outcome = sample.correct ? '<span class="badge ok">correct</span>' : '<span class="badge bad">wrong</span>';
  const answer = sample.spans === null ? 'no answer found' : `answer tokens ${sample.spans.content[0]}–${sample.spans.content[1]}`;
  const w = sample.weights;
  const mean = w.length > 0 ? w.reduce((a, b) => a + b, 0) / w.length : null;
  const meta = [
    `step ${sample.step}`,
    `group ${sample.group}`,
    `reward ${formatNumber(sample.reward)}`,
    `advantage ${formatNumber(sample.advantage)}`,
    `${sample.tokens.length} tokens`,
    `mean weight ${formatNumber(mean)}`,
    answer,
  ].join(' · ');
  return [
    `<article class="sample">`,
    `<div class="sample-head">${outcome} <span class="meta">${escapeHtml(meta)}</span></div>`,
    `<details class="prompt"><summary>prompt</summary><pre>${escapeHtml(sample.prompt)}</pre></details>`,
    renderHeatmap(sample, scale),
    `</article>`,
  ].join('\n');
}

/** The colour legend of the heatmaps. */
export function renderLegend(scale: WeightScale): string {
  const stops = [scale.lo, (scale.lo + 1) / 2, 1, (1 + scale.hi) / 2, scale.hi].map((w) => weightColor(w, scale).background);
  const uniform = scale.lo === 1 && scale.hi === 1;
  return [
    `<div class="legend">`,
    `<span class="legend-label">${formatNumber(scale.lo)}</span>`,
    `<span class="legend-bar" style="background:linear-gradient(to right, ${stops.join(', ')})"></span>`,
    `<span class="legend-label">${formatNumber(scale.hi)}</span>`,
    `<span class="legend-note">token weight (white = 1${uniform ? '; every weight shown is 1' : ''})</span>`,
    `<span class="answer legend-key">answer</span> content`,
    `<span class="delim legend-key">{ }</span> answer delimiters`,
    `</div>`,
  ].join('');
}

/**
 * The same evaluation rollouts over checkpoints: per rollout (up to `max`, correct and wrong
 * alternating), one heatmap line per checkpoint step, on one colour scale.
 */
export function renderCheckpointHeatmaps(
  records: readonly CheckpointWeightRecord[],
  max: number,
): { html: string; scale: WeightScale; shown: number } {
  const scale = weightScale(records);
  const ids = [...new Set(records.map((r) => r.rollout))].sort((a, b) => a - b);
  const first = new Map(ids.map((id) => [id, records.find((r) => r.rollout === id)!]));
  const correct = ids.filter((id) => first.get(id)!.correct);
  const wrong = ids.filter((id) => !first.get(id)!.correct);
  const picked: number[] = [];
  for (let k = 0; picked.length < max && (k < correct.length || k < wrong.length); k++) {
    if (k < correct.length) picked.push(correct[k]!);
    if (k < wrong.length && picked.length < max) picked.push(wrong[k]!);
  }
  const cards = picked
    .sort((a, b) => a - b)
    .map((id) => {
      const rows = records.filter((r) => r.rollout === id).sort((a, b) => a.step - b.step);
      const r0 = rows[0]!;
      const outcome = r0.correct ? '<span class="badge ok">correct</span>' : '<span class="badge bad">wrong</span>';
      const meta = `rollout ${id} · ${r0.tokens.length} tokens · ${r0.reasoning === null ? 'no box' : `${r0.reasoning} reasoning tokens before the first box`}`;
      const lines = rows.map(
        (r) => `<div class="ckpt-row" data-step="${r.step}"><span class="meta">step ${r.step}</span>${renderHeatmap(r, scale)}</div>`,
      );
      return [
        `<article class="sample" data-rollout="${id}">`,
        `<div class="sample-head">${outcome} <span class="meta">${escapeHtml(meta)}</span></div>`,
        ...lines,
        '</article>',
      ].join('\n');
    });
  return { html: cards.join('\n'), scale, shown: picked.length };
}
