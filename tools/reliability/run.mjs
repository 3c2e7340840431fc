// Load and fault probes, loopback only, bounded in count and time. One module per target in targets/.
//   npm run build && node tools/reliability/run.mjs [--target reward-server,serve,train] [--scale 1] [--seed 1] [--json out.json]
// (`--help` prints the usage.) Exit 1 when a probe failed (each failure printed), 2 for bad arguments.
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
const USAGE = `usage: node tools/reliability/run.mjs [--target NAME,...] [--scale X] [--seed N] [--json FILE]

Load and fault probes of the built bins, on loopback only, bounded in count and time (run \`npm run build\` first).
  --target  which targets, comma-separated (default: all): ${Object.keys(targets).join(', ')}
  --scale   multiplies the request counts and kill runs (default 1: 16,000 requests per route, 4 killed runs)
  --seed    seed of the kill times (default 1)
  --json    also write the figures to FILE (uptime before and after in it)
  -h, --help  this help

exit status: 0 when every probe held, 1 when one failed (each failure printed), 2 for bad arguments`;

/** A bad argument: one line and the usage, exit 2 (no stack trace). */
function usageError(message) {
  process.stderr.write(`run.mjs: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      target: { type: 'string', default: Object.keys(targets).join(',') },
      scale: { type: 'string', default: '1' },
      seed: { type: 'string', default: '1' },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (e) {
  usageError(e.message);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const chosen = values.target.split(',');
for (const name of chosen) if (!targets[name]) usageError(`--target: no target ${name}; targets: ${Object.keys(targets).join(', ')}`);
if (!(Number(values.scale) > 0)) usageError(`--scale: must be a number over 0 (got ${values.scale})`);
if (!Number.isInteger(Number(values.seed))) usageError(`--seed: must be an integer (got ${values.seed})`);

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
