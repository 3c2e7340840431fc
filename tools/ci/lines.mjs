// Lines of TypeScript per package (non-blank; sources and tests apart), printed by .ci/run so that growth is
// visible from run to run, as tinygrad's sz.py does. Never fails.
//   node tools/ci/lines.mjs
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
/** Every .ts/.cts file under dir, dist and node_modules skipped. */
function* files(dir) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.c?ts$/.test(name) && !name.endsWith('.d.ts')) yield p;
  }
}
const count = (p) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '').length;
const rows = [];
for (const top of ['packages', 'methods', 'test']) {
  for (const name of readdirSync(join(root, top)).sort()) {
    const src = join(root, top, name, 'src');
    if (!existsSync(src)) continue;
    let source = 0;
    let tests = 0;
    for (const f of files(src)) {
      const n = count(f);
      if (/\.test\.ts$|[/\\]test-utils[/\\]/.test(f)) tests += n;
      else source += n;
    }
    rows.push([`${top}/${name}`, source, tests]);
  }
}
const w = Math.max(...rows.map((r) => r[0].length));
console.log(`${'package'.padEnd(w)}  ${'source'.padStart(7)}  ${'tests'.padStart(7)}`);
for (const [name, s, t] of rows) console.log(`${name.padEnd(w)}  ${String(s).padStart(7)}  ${String(t).padStart(7)}`);
const total = rows.reduce((a, r) => [a[0] + r[1], a[1] + r[2]], [0, 0]);
console.log(`${'total'.padEnd(w)}  ${String(total[0]).padStart(7)}  ${String(total[1]).padStart(7)}`);
