// Markdown tables (as in docs/benchmarks/scale.md) from the JSON files bench.mjs --out wrote:
//
//   node tools/bench/scale/table.mjs results.json [more.json ...]
//
// Shapes found in several files are taken from the last one; phases merge across files.
import { readFileSync } from 'node:fs';

const shapes = {};
const loads = [];
for (const file of process.argv.slice(2)) {
  const j = JSON.parse(readFileSync(file, 'utf8'));
  loads.push(`${j.uptime_before.replace(/.*load average: /, '')} -> ${j.uptime_after.replace(/.*load average: /, '')}`);
  for (const [name, s] of Object.entries(j.shapes)) {
    const prev = shapes[name];
    shapes[name] = prev
      ? {
          ...s,
          results: { ...prev.results, ...s.results },
          fit_24gib: { ...prev.fit_24gib, ...s.fit_24gib },
          fit_wasm_4gib: { ...prev.fit_wasm_4gib, ...s.fit_wasm_4gib },
        }
      : s;
  }
}
const f = (x, d = 1) => (x === undefined || x === null || Number.isNaN(x) ? '-' : Number(x).toFixed(d));
const n = (x) => (x === undefined ? '-' : Math.round(x).toLocaleString('en-US'));
const M = (p) => (p >= 1e8 ? `${(p / 1e6).toFixed(0)}M` : p >= 1e6 ? `${(p / 1e6).toFixed(1)}M` : `${(p / 1e3).toFixed(0)}k`);
const fail = (r) => (r?.ok ? null : r ? `fails: ${r.error}` : 'not run');

console.log(
  '| shape | parameters | load: s (CPU s) | RSS after load | prefill tokens/s (per CPU-s) | KV decode tokens/s (per CPU-s) | fused GRAIL pass: size, s (CPU s), tokens/CPU-s | training micro-step: tokens, s (CPU s) |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const [name, s] of Object.entries(shapes)) {
  const { load, decode, grail, train } = s.results;
  const ld = load?.load ?? decode?.load;
  const d = decode?.decode;
  const g = grail?.grail;
  const t = train?.train;
  const size = g?.what.match(/(\d+) x (\d+) tokens/);
  const budget = g?.token_budget ?? g?.what.match(/token budget (\d+)/)?.[1];
  const gText = g
    ? `${size?.[1]} x ${size?.[2]} (budget ${budget}): ${f(g.s)} (${f(g.cpu_s)}), ${f(g.tokens_per_cpu_s)}${grail.failed_sizes ? `; ${grail.failed_sizes.map((x) => `${x.size.rows} x ${x.size.seq}: out of memory`).join('; ')}` : ''}`
    : fail(grail);
  const tText = t
    ? `${t.tokens} on ${train.backend}${train.failed_first ? ` (wasm: ${train.failed_first.error.replace(/^not run on wasm: /, '')})` : ''}: ${f(t.micro_step_s)} (${f(t.micro_step_cpu_s)})`
    : fail(train);
  console.log(
    `| ${name} | ${M(s.parameters)} | ${ld ? `${f(ld.s)} (${f(ld.cpu_s)})` : '-'} | ${ld ? `${n(ld.rss_after_mb)} MB` : '-'} | ${d ? `${f(d.prefill_tokens_per_s)} (${f(d.prefill_tokens_per_cpu_s)})` : fail(decode)} | ${d ? `${f(d.decode_tokens_per_s)} (${f(d.decode_tokens_per_cpu_s)})` : '-'} | ${gText} | ${tText} |`,
  );
}
console.log('');
console.log(
  '| shape | peak RSS: decode / GRAIL / train | tfjs peak tensor MB: GRAIL / train (fwd+bwd) / AdamW | largest tensor (elements) | 24 GiB: training state, max training micro-batch tokens, max GRAIL token budget, KV-cache tokens | wasm 4 GiB heap: same |',
);
console.log('|---|---|---|---|---|---|');
for (const [name, s] of Object.entries(shapes)) {
  const { decode, grail, train } = s.results;
  const g = grail?.grail;
  const t = train?.train;
  const fitText = (x) =>
    `${f(x.training_state_gib, 2)} GiB, ${x.train_fits === false ? 'does not fit' : n(x.train_max_micro_batch_tokens)}, ${n(x.grail_max_token_budget)}, ${n(x.inference_kv_cache_tokens)}`;
  const largest = Math.max(
    g?.largest_tensor?.elements ?? 0,
    t?.forward_backward?.largest_tensor?.elements ?? 0,
    t?.adamw?.largest_tensor?.elements ?? 0,
  );
  console.log(
    `| ${name} | ${n(decode?.peak_rss_mb)} / ${n(grail?.peak_rss_mb)} / ${n(train?.peak_rss_mb)} MB | ${n(g?.tf_peak_mb)} / ${n(t?.forward_backward?.tf_peak_mb)} / ${n(t?.adamw?.tf_peak_mb)} | ${n(largest)} | ${fitText(s.fit_24gib)} | ${fitText(s.fit_wasm_4gib)} |`,
  );
}
console.log('');
console.log(`load average (1, 5, 15 min) before -> after each run: ${loads.join('; ')}`);
