/**
 * The unit a problem asks for ("How many feet", "in centimeters", "the number of degrees", "in $\text{cm}^2$",
 * "what percent"), by kind of quantity, so that an answer in another unit of the same kind can be refused. The unit
 * words and their canonical names are the answer parser's (../units.ts); a word that is not a known unit
 * ("how many ways") asks for nothing.
 */
import { canonicalUnit } from '../units.js';

/** The dimension of each canonical unit; units of one dimension are interchangeable answers, but for the value. */
const DIMENSION: Record<string, string> = {
  millimeter: 'length',
  centimeter: 'length',
  meter: 'length',
  kilometer: 'length',
  inch: 'length',
  foot: 'length',
  yard: 'length',
  mile: 'length',
  second: 'time',
  minute: 'time',
  hour: 'time',
  day: 'time',
  week: 'time',
  month: 'time',
  year: 'time',
  milligram: 'mass',
  gram: 'mass',
  kilogram: 'mass',
  pound: 'mass',
  ounce: 'mass',
  ton: 'mass',
  liter: 'length^3',
  milliliter: 'length^3',
  gallon: 'length^3',
  quart: 'length^3',
  pint: 'length^3',
  acre: 'length^2',
  hectare: 'length^2',
  degree: 'angle',
  radian: 'angle',
  dollar: 'money',
  cent: 'money',
  euro: 'money',
  yuan: 'money',
  yen: 'money',
  rupee: 'money',
  mph: 'length/time',
  kph: 'length/time',
  kelvin: 'temperature',
  celsius: 'temperature',
  fahrenheit: 'temperature',
  joule: 'energy',
  calorie: 'energy',
  byte: 'data',
  bit: 'data',
  percent: 'percent',
};

/** The kind of a canonical unit (`foot^2` -> `length^2`, `kilometer/hour` -> `length/time`), or null when unknown. */
function unitKind(unit: string): string | null {
  const m = /^([a-z/]+?)(?:\^(\d+))?$/.exec(unit);
  if (m === null) return null;
  const parts = (m[1] as string).split('/').map((w) => DIMENSION[w] ?? null);
  if (parts.some((p) => p === null)) return null;
  const base = parts.join('/');
  if (m[2] === undefined) return base;
  return /^[a-z]+$/.test(base) ? `${base}^${m[2]}` : null;
}

/** Units with two canonical names. */
const SAME: Record<string, string> = { mph: 'mile/hour', kph: 'kilometer/hour' };

/** Question words that would read as units but are English (`in` = inch, `a`, `s`): at least 2 letters, and not these. */
const NOT_UNITS = new Set(['in', 'am', 'pm', 'ha', 'pt', 'at']);
const SHAPE = String.raw`((?:square|cubic)\s+)?([A-Za-z]+)(?:\s+per\s+([A-Za-z]+))?`;
/** "How many feet", "the number of degrees": the thing counted is the unit. */
const COUNTED = new RegExp(String.raw`\b(?:how\s+many|number\s+of)\s+${SHAPE}`, 'gi');
/**
 * Words that may follow "in <unit>" when it names the unit of the answer: they end the noun phrase ("the height in
 * centimeters of the cylinder", "how far in miles did she run", "the distance in km between A and B"). Any other
 * word makes the unit word part of a longer phrase ("in second place", "in dollar bills"), which asks nothing.
 */
const AFTER_UNIT = String.raw`(?:of|for|is|are|was|were|will|would|does|do|did|can|could|should|must|has|have|had|that|which|when|if|between|from|above|below|at|on|after|before|along|across|around|and|or|with|needed|required|it|rounded|to\s+the|and\s+round)\b`;
/** "in centimeters?", "(in dollars)", "measured in hours, ...", "in meters of the tower": a unit word that ends a phrase. */
const IN_UNIT = new RegExp(
  String.raw`\b(?:in|in\s+units\s+of|expressed\s+in|measured\s+in)\s+${SHAPE}(?=\s*(?:[?.,;:)!$]|$)|\s+${AFTER_UNIT})`,
  'gi',
);
/** "in second place", "in minute detail": singular words that are units elsewhere but never the unit asked after "in". */
const IN_NOT_ASKED = new Set(['second', 'minute']);
/** "in $\text{cm}^2$", "how many $\mbox{ft}$". */
const TEXT_UNIT = /\b(?:in|how\s+many)\s+\$?\s*\\(?:text|mbox|mathrm)\s*\{\s*([A-Za-z]+)\s*\}(?:\s*\^\s*\{?(\d)\}?)?/gi;
const DEGREE_MEASURE = /\bdegree\s+measure\b|\bmeasure,?\s+in\s+degrees\b/i;
const RADIAN_MEASURE = /\bradian\s+measure\b/i;
const PERCENT = /\b(?:what|which)\s+percent(?:age)?\b|\bas\s+a\s+percent(?:age)?\b|\bpercent(?:age)?\s+of\b|\bhow\s+many\s+percent\b/i;

function unitOf(square: string | undefined, word: string, per: string | undefined): string | null {
  const w = word.toLowerCase();
  if (w.length < 2 || NOT_UNITS.has(w)) return null;
  const parts = [square ?? '', w];
  if (per !== undefined) parts.push('/', per.toLowerCase());
  return canonicalUnit(parts, null);
}

/**
 * The units `problem` asks for, by kind: `{ length: 'foot' }` for "How many feet ...". A kind asked in two units
 * ("3 feet ... in inches") is ambiguous and left out. Empty when the problem names no unit.
 */
export function askedUnits(problem: string): Map<string, string> {
  const found: string[] = [];
  for (const m of problem.matchAll(COUNTED)) found.push(unitOf(m[1], m[2] as string, m[3]) ?? '');
  for (const m of problem.matchAll(IN_UNIT)) {
    if (m[3] === undefined && IN_NOT_ASKED.has((m[2] as string).toLowerCase())) continue;
    found.push(unitOf(m[1], m[2] as string, m[3]) ?? '');
  }
  for (const m of problem.matchAll(TEXT_UNIT)) found.push(canonicalUnit([m[1] as string], m[2] ?? null) ?? '');
  if (DEGREE_MEASURE.test(problem)) found.push('degree');
  if (RADIAN_MEASURE.test(problem)) found.push('radian');
  if (PERCENT.test(problem)) found.push('percent');
  const byKind = new Map<string, string>();
  const ambiguous = new Set<string>();
  for (const unit of found) {
    const kind = unit === '' ? null : unitKind(unit);
    if (kind === null) continue;
    const had = byKind.get(kind);
    if (had !== undefined && had !== unit) ambiguous.add(kind);
    byKind.set(kind, unit);
  }
  for (const k of ambiguous) byKind.delete(k);
  return byKind;
}

/**
 * Why an answer's units contradict the units asked (`the problem asks for foot, the answer is in inch`), or null:
 * only a unit of a kind asked, other than the one asked, contradicts it. A unit the gold states decides its kind
 * instead of the question (`the gold is in degree, the answer is in radian`).
 */
export function unitConflict(
  asked: ReadonlyMap<string, string>,
  goldUnits: readonly string[],
  predUnits: readonly string[],
): string | null {
  if (asked.size === 0 && goldUnits.length === 0) return null;
  const same = (u: string): string => SAME[u] ?? u;
  const byGold = new Map<string, Set<string>>();
  for (const u of goldUnits) {
    const kind = unitKind(u);
    if (kind !== null) byGold.set(kind, (byGold.get(kind) ?? new Set()).add(same(u)));
  }
  for (const unit of predUnits) {
    const kind = unitKind(unit);
    if (kind === null) continue;
    const gold = byGold.get(kind);
    if (gold !== undefined) {
      if (!gold.has(same(unit))) return `unit: the gold is in ${[...gold].join(', ')}, the answer is in ${unit}`;
      continue;
    }
    const want = asked.get(kind);
    if (want !== undefined && same(want) !== same(unit)) return `unit: the problem asks for ${want}, the answer is in ${unit}`;
  }
  return null;
}

/** Words that may follow an answer as its unit (`200 inches`, `$200$ \text{ inches}`, `\boxed{200}\text{ cm}^2`). */
const TRAILING =
  /^[\s$}\\)\]]*?(?:\\[()[\]]\s*)?(?:\\(?:text|mbox|mathrm)\s*\{\s*([A-Za-z ]+?)\s*\}|((?:square\s+|cubic\s+)?[A-Za-z]+(?:\s+per\s+[A-Za-z]+)?))(?:\s*\^\s*\{?(\d)\}?)?/;

/**
 * The known unit written right after an answer at `at` in `text` (`inches` in "is 200 inches long"), or null. Only
 * the words right after it count, and only known units: "200 ways" or "200 and" name none.
 */
export function unitAfter(text: string, at: number): string | null {
  const span = text.slice(at, at + 80);
  const m = TRAILING.exec(span);
  if (m === null) return null;
  const words = (m[1] ?? m[2] ?? '').trim();
  // One letter (`\boxed{5} m.`) is a unit only in `\text{}`, or lower-case where the sentence ends after it.
  const ends = /^[a-z]$/.test(words) && /^\s*(?:[.,;!?)]|$)/.test(span.slice(m[0].length));
  if ((words.length < 2 && !(m[1] !== undefined || ends)) || NOT_UNITS.has(words.toLowerCase())) return null;
  return canonicalUnit([words], m[3] ?? null);
}
