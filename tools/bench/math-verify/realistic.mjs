// Grades realistic completions built from the shared benchmarks (question and gold of each row) under the default
// reward options and the eval fallbacks, each with and without the problem statement, and prints right answers
// rewarded and wrong answers rewarded (false positives) as a Markdown table (docs/benchmarks/math-verify.md).
//
// Per row: the gold boxed after some reasoning; the same unboxed ("The final answer is G."); a draft box corrected
// by a final one; the gold reformatted (\dfrac, a/b, no \left\right); the gold in the unit the question asks; for a
// letter gold with listed options, the option's text. Wrong: a draft of the gold corrected to a wrong final box; the
// gold's value in another unit of the kind asked (boxed, after the box, unboxed); an integer off by one. Reasoning-model
// shapes: a draft box inside <think>...</think> then the final answer after it (right when that final is the gold), a
// think block that never closes and a box that never closes (truncated: wrong, whatever they hold). A rounded
// decimal of a non-integer gold is right where the question asks for that rounding, wrong otherwise. The labels come
// from this script's own reading of each question (its unit and rounding regexes), not from the grader.
//
//   npx tsc -b packages/math-verify && node tools/bench/math-verify/realistic.mjs [--data /work/shared/data/benchmarks]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { mathReward } from '../../../packages/math-verify/dist/index.js';

const { values } = parseArgs({ options: { data: { type: 'string', default: '/work/shared/data/benchmarks' } } });
const FILES = ['math500.jsonl', 'aime24.jsonl', 'amc23.jsonl', 'college_math.jsonl'];

const OTHER = {
  inches: 'feet',
  feet: 'inches',
  yards: 'feet',
  miles: 'kilometers',
  meters: 'centimeters',
  centimeters: 'meters',
  'square inches': 'square feet',
  'square feet': 'square inches',
  'square meters': 'square centimeters',
  'square centimeters': 'square meters',
  'cubic inches': 'cubic feet',
  gallons: 'liters',
  seconds: 'minutes',
  minutes: 'seconds',
  hours: 'minutes',
  days: 'weeks',
  years: 'months',
  dollars: 'cents',
  cents: 'dollars',
  degrees: 'radians',
  pounds: 'ounces',
  ounces: 'pounds',
  kilograms: 'pounds',
};
const KIND = {
  inches: 'len',
  feet: 'len',
  yards: 'len',
  miles: 'len',
  meters: 'len',
  centimeters: 'len',
  'square inches': 'area',
  'square feet': 'area',
  'square meters': 'area',
  'square centimeters': 'area',
  'cubic inches': 'vol',
  gallons: 'vol',
  seconds: 't',
  minutes: 't',
  hours: 't',
  days: 't',
  years: 't',
  dollars: '$',
  cents: '$',
  degrees: 'angle',
  pounds: 'mass',
  ounces: 'mass',
  kilograms: 'mass',
};
const WORDS = Object.keys(OTHER)
  .sort((a, b) => b.length - a.length)
  .join('|');
const ASKS = [
  new RegExp(`\\bhow many (${WORDS})\\b`, 'gi'),
  new RegExp(`\\bnumber of (${WORDS})\\b`, 'gi'),
  new RegExp(`\\bin (${WORDS})\\s*[?.,;:)$]`, 'gi'),
  new RegExp(`\\bin (${WORDS}),? of\\b`, 'gi'),
];

/** The one unit the question asks for (null when none, or two of one kind). */
function askedUnit(problem) {
  const found = new Set();
  for (const re of ASKS) for (const m of problem.matchAll(re)) found.add(m[1].toLowerCase());
  if (/\bdegree measure\b/i.test(problem)) found.add('degrees');
  if (/\bradian measure\b/i.test(problem)) return null;
  const kinds = new Set([...found].map((u) => KIND[u]));
  return found.size === 1 && kinds.size === 1 ? [...found][0] : null;
}
/** Decimal places the question asks for ("to the nearest hundredth": 2), or null. */
function askedPlaces(problem) {
  if (/nearest\s+hundredth/i.test(problem)) return 2;
  if (/nearest\s+tenth/i.test(problem)) return 1;
  if (/nearest\s+thousandth/i.test(problem)) return 3;
  const m = /to\s+(\d|two|three|one)\s+decimal\s+places/i.exec(problem);
  return m ? ({ one: 1, two: 2, three: 3 }[m[1]] ?? Number(m[1])) : null;
}
/** The gold as written, without `$`, `^\circ`, `\text{unit}`; null for golds that are not a plain value. */
function bare(gold) {
  const g = gold
    .trim()
    .replace(/^\$+|\$+$/g, '')
    .replace(/^\\\$/, '')
    .replace(/\^\s*\{?\\circ\}?$/, '')
    .replace(/\s*\\(?:text|mbox)\{[^{}]*\}(?:\^\d)?$/, '')
    .trim();
  return /^-?(?:\d+(?:\.\d+)?|\\d?frac\{\d+\}\{\d+\}|\d*\\sqrt\{?\d+\}?|\d*\\pi)$/.test(g) ? g : null;
}
/** The value of a bare gold as a double. */
function value(g) {
  const s = g
    .replace(/\\d?frac\{(\d+)\}\{(\d+)\}/, '($1/$2)')
    .replace(/(\d*)\\sqrt\{?(\d+)\}?/, (_, c, r) => `(${c || 1}*Math.sqrt(${r}))`)
    .replace(/(\d*)\\pi/, (_, c) => `(${c || 1}*Math.PI)`);
  return Function(`"use strict"; return (${s});`)();
}
const round = (x, k) => (Math.sign(x) * Math.round(Math.abs(x) * 10 ** k)) / 10 ** k;
const reason = 'We set up the problem, simplify step by step and check the result.';

const items = [];
const add = (right, pred, gold, problem, what) => items.push({ right, pred, gold, problem, what });
for (const file of FILES) {
  for (const line of readFileSync(`${values.data}/${file}`, 'utf8').trim().split('\n')) {
    const row = JSON.parse(line);
    const problem = String(row.problem ?? row.question ?? '');
    const gold = typeof row.answer === 'number' ? String(row.answer) : String(row.answer);
    const g = gold
      .trim()
      .replace(/^\$+|\$+$/g, '')
      .trim();
    add(true, `${reason} Therefore, the answer is $\\boxed{${g}}$.`, gold, problem, 'boxed');
    add(true, `${reason} The final answer is ${g}.`, gold, problem, 'unboxed');
    const b = bare(gold);
    const int = b !== null && /^-?\d+$/.test(b) ? BigInt(b) : null;
    const wrong = int !== null ? String(int + 1n) : b !== null ? `-${b}` : null;
    if (wrong !== null) {
      add(
        true,
        `At first I got $\\boxed{${wrong}}$, but checking again, the answer is $\\boxed{${g}}$.`,
        gold,
        problem,
        'draft then final',
      );
      add(
        false,
        `At first I got $\\boxed{${g}}$, but checking again, the answer is $\\boxed{${wrong}}$.`,
        gold,
        problem,
        'draft corrected to a wrong final',
      );
    }
    if (wrong !== null) {
      // Reasoning models: a think block before the answer; drafts inside it are not the answer.
      const think = (inside) => `<think>\n${reason} Let me try: ${inside}\n</think>\n\n`;
      add(
        true,
        `${think(`maybe $\\boxed{${wrong}}$? No, recheck.`)}The answer is $\\boxed{${g}}$.`,
        gold,
        problem,
        'think: draft, then a final box',
      );
      add(
        true,
        `${think(`maybe $\\boxed{${wrong}}$? No, recheck.`)}The final answer is ${g}.`,
        gold,
        problem,
        'think: draft, then unboxed',
      );
      add(false, `${think(`so $\\boxed{${g}}$.`)}The final answer is ${wrong}.`, gold, problem, 'think: right draft, wrong unboxed final');
      add(
        false,
        `${think(`so $\\boxed{${g}}$.`)}The final answer is $\\boxed{${wrong}}$.`,
        gold,
        problem,
        'think: right draft, wrong boxed final',
      );
      add(
        false,
        `<think>\n${reason} So far $\\boxed{${g}}$. Wait, let me double-check the second case`,
        gold,
        problem,
        'think never closed (truncated)',
      );
      add(false, `${reason} Therefore, the answer is $\\boxed{${g}`, gold, problem, 'box never closed (truncated)');
    }
    const re = g
      .replace(/\\dfrac/g, '\\frac')
      .replace(/\\left|\\right/g, '')
      .replace(/^\\frac\{(\d+)\}\{(\d+)\}$/, '$1/$2');
    if (re !== g) add(true, `${reason} So the answer is $\\boxed{${re}}$.`, gold, problem, 'reformatted');
    const unit = askedUnit(problem);
    if (unit !== null && b !== null) {
      add(true, `${reason} So the answer is $\\boxed{${b}\\text{ ${unit}}}$.`, gold, problem, 'in the unit asked');
      const other = OTHER[unit];
      add(false, `${reason} So the answer is $\\boxed{${b}\\text{ ${other}}}$.`, gold, problem, 'wrong unit, boxed');
      add(false, `${reason} So the answer is $\\boxed{${b}}$ ${other}.`, gold, problem, 'wrong unit after the box');
      add(false, `${reason} The answer is ${b} ${other}.`, gold, problem, 'wrong unit, unboxed');
    }
    if (b !== null && int === null) {
      const x = value(b);
      const places = askedPlaces(problem);
      const k = places ?? 2;
      const r = round(x, k).toFixed(k);
      if (Math.abs(Number(r) - x) > 1e-12)
        add(
          places !== null,
          `${reason} So the answer is approximately $\\boxed{${r}}$.`,
          gold,
          problem,
          places !== null ? 'rounded as asked' : 'rounded, not asked',
        );
    }
    const letter = /^\\text\{\(([A-E])\)\}$|^\(?([A-E])\)?$/.exec(g);
    if (letter) {
      const L = letter[1] ?? letter[2];
      const opt = new RegExp(`\\(${L}\\)\\s*([^\\n(]+)`).exec(problem);
      if (opt) add(true, `${reason} The answer is $\\boxed{\\text{${opt[1].trim()}}}$.`, gold, problem, "the option's text");
    }
  }
}

const configs = [
  ['default', {}],
  ['--fallbacks', { fallbacks: true }],
];
const rows = [];
const rewardedBy = new Map();
for (const [name, o] of configs) {
  for (const withProblem of [false, true]) {
    const got = items.map((x) => mathReward(x.pred, x.gold, withProblem ? { ...o, problem: x.problem } : o).reward === 1);
    rewardedBy.set(`${name} ${withProblem}`, got);
    const count = (right) => {
      const kinds = {};
      let n = 0;
      items.forEach((x, i) => {
        if (x.right === right && got[i]) {
          n++;
          kinds[x.what] = (kinds[x.what] ?? 0) + 1;
        }
      });
      return [n, kinds];
    };
    const [right] = count(true);
    const [fp, kinds] = count(false);
    rows.push({ name, withProblem, right, fp, kinds });
  }
}
const nRight = items.filter((x) => x.right).length;
const nWrong = items.length - nRight;
console.log(`${items.length} completions from ${FILES.length} benchmarks: ${nRight} right, ${nWrong} wrong\n`);
console.log('| grader | problem given | right rewarded | false positives | false positives by kind |\n|---|---|---:|---:|---|');
for (const r of rows)
  console.log(
    `| \`${r.name}\` | ${r.withProblem ? 'yes' : 'no'} | ${r.right} of ${nRight} | ${r.fp} of ${nWrong} | ${
      Object.entries(r.kinds)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || '-'
    } |`,
  );
for (const [name] of configs) {
  const before = rewardedBy.get(`${name} false`);
  const after = rewardedBy.get(`${name} true`);
  const lost = items.filter((x, i) => x.right && before[i] && !after[i]);
  const gained = items.filter((x, i) => x.right && !before[i] && after[i]);
  console.log(
    `\n${name}: right answers lost with the problem: ${lost.length}; gained: ${gained.length}${gained.length ? ` (${gained.map((x) => x.what).join(', ')})` : ''}`,
  );
  for (const x of lost) console.log(`  lost: ${x.what}: gold ${x.gold}, ${x.pred.slice(-60)}`);
}
