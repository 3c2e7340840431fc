// Load and fault probes, loopback only, bounded in count and time. One module per target in targets/.
//   npm run build && node tools/reliability/run.mjs [--target reward-server,train] [--scale 1] [--seed 1] [--json out.json]
// --scale multiplies the request counts and kill runs (1: 16,000 requests per route, 4 killed runs).
// Exit 1 when a probe failed (each failure printed).
import { execSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const targets = Object.fromEntries(
  await Promise.all(
    readdirSync(new URL('./targets/', import.meta.url))
      .filter((f) => f.endsWith('.mjs'))
      .map(async (f) => {
        const t = (await import(new URL(`./targets/${f}`, import.meta.url).href)).default;
        return [t.name, t];
      }),
  ),
);
const { values } = parseArgs({
  options: {
    target: { type: 'string', default: Object.keys(targets).join(',') },
    scale: { type: 'string', default: '1' },
    seed: { type: 'string', default: '1' },
    json: { type: 'string' },
  },
});
const chosen = values.target.split(',');
for (const name of chosen) if (!targets[name]) throw new Error(`--target: no target ${name}; targets: ${Object.keys(targets).join(', ')}`);

let state = Number(values.seed) >>> 0 || 1;
/** xorshift32 in [0, 1): kill times reproducible by seed */
const rng = () => {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) / 2 ** 32;
};
const uptime = () => execSync('uptime').toString().trim();
const report = { uptimeBefore: uptime(), scale: Number(values.scale), seed: Number(values.seed), results: {}, failures: [] };
console.log(`uptime before: ${report.uptimeBefore}`);
for (const name of chosen) {
  const t0 = performance.now();
  const result = await targets[name].run({ scale: Number(values.scale), rng, log: (m) => console.log(`[${name}] ${m}`) });
  report.results[name] = { ...result, seconds: Number(((performance.now() - t0) / 1000).toFixed(1)) };
  for (const f of targets[name].failures(result)) report.failures.push(`${name}: ${f}`);
  console.log(`[${name}] ${JSON.stringify(report.results[name], null, 1)}`);
}
report.uptimeAfter = uptime();
console.log(`uptime after: ${report.uptimeAfter}`);
if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2) + '\n');
for (const f of report.failures) console.log(`FAILED ${f}`);
console.log(report.failures.length === 0 ? 'every probe held' : `${report.failures.length} probe(s) failed`);
process.exit(report.failures.length === 0 ? 0 : 1);
