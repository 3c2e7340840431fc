// Prints the per-source agreement of @rlvr/math-verify with the held-out corpus as a Markdown table
// (the table in packages/math-verify/README.md), then every disagreement with its reason. Run after building:
//   npx tsc -b packages/math-verify && node tools/bench/math-verify/agreement.mjs
import { fileURLToPath } from 'node:url';
import * as api from '../../../packages/math-verify/dist/index.js';
import { UNIFORM_OPTIONS, agreementTable, loadCorpus, uniformAgreement } from '../../../packages/math-verify/test/corpus-profile.mjs';

const rows = loadCorpus(fileURLToPath(new URL('../../../packages/math-verify/test/fixtures/math-verify-cases.jsonl', import.meta.url)));
const { table, total, misses } = agreementTable(api, rows);
const pct = (e) => ((100 * e.agree) / e.cases).toFixed(1);
console.log('| source | cases | agree | % |\n|---|---:|---:|---:|');
for (const e of table) console.log(`| ${e.source} | ${e.cases} | ${e.agree} | ${pct(e)} |`);
console.log(`| **all** | **${total.cases}** | **${total.agree}** | **${pct(total)}** |`);
console.log(`\n${misses.length} disagreements:`);
const cut = (s) => (s == null ? String(s) : s.length > 120 ? `${s.slice(0, 50)} … ${s.slice(-60)}` : s);
for (const m of misses) {
  console.log(
    `- #${m.index} ${m.source}: expected ${m.expected}, got ${m.got} (${m.reason}); gold ${JSON.stringify(cut(m.gold))}, pred ${JSON.stringify(cut(m.pred))}`,
  );
}

const u = uniformAgreement(api, rows);
console.log(
  `\nOne uniform setting for every row, mathReward(pred, gold, ${JSON.stringify(UNIFORM_OPTIONS)}): ${u.agree} of ${u.cases} (${((100 * u.agree) / u.cases).toFixed(1)}%)`,
);
console.log(`${u.misses.length} disagreements: ${u.misses.map((m) => `#${m.index} ${m.source} (expected ${m.expected})`).join(', ')}`);
