// The ten slowest tests of a `npm test` log (nx's streamed vitest output), so CI shows where its time goes.
//   npm test 2>&1 | tee test.log; node tools/ci/slowest.mjs test.log [--top 10]
// Vitest prints a test's duration when it passes its slow-test threshold (300 ms), which the ten slowest do.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '10' } }, allowPositionals: true });
if (positionals.length !== 1) {
  console.error('usage: node tools/ci/slowest.mjs LOG [--top N]');
  process.exit(2);
}
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts an ANSI colour code
const ansi = /\x1b\[[0-9;]*m/g;
const tests = [];
for (const raw of readFileSync(positionals[0], 'utf8').split('\n')) {
  const line = raw.replace(ansi, '');
  // "@rlvr/x:    ✓ suite > test name 1234ms" (a file's summary line reads "✓ src/a.test.ts (8 tests) 2077ms")
  const m = /^(@[\w/-]+):\s+[✓×]\s+(.*?)\s+(\d+)ms$/.exec(line);
  if (!m || /\.test\.[cm]?[jt]s \(\d+ tests?/.test(m[2])) continue;
  tests.push({ project: m[1], name: m[2], ms: Number(m[3]) });
}
tests.sort((a, b) => b.ms - a.ms);
console.log(`the ${Math.min(Number(values.top), tests.length)} slowest tests:`);
for (const t of tests.slice(0, Number(values.top))) console.log(`${(t.ms / 1000).toFixed(1).padStart(7)} s  ${t.project}  ${t.name}`);
