/**
 * Units after a quantity (`42\text{ inches}`, `10 cm^2`, `5 km/h`): the parser drops them from the value, and the
 * known ones are kept by canonical name so that a pred in another unit than the gold's is refused. Only units of
 * measurement and money are known; other words after a number (`12 apples`, `6 ways`) are not units and never
 * refuse anything. There is no conversion: `3.5 feet` is not `42 inches`, the problem asked for the gold's unit.
 */

/** Canonical name by alias (lower case; a few case-sensitive ones are checked first). */
const ALIASES: Record<string, string> = {};
const CASE_SENSITIVE: Record<string, string> = {
  L: 'liter',
  mL: 'milliliter',
  K: 'kelvin',
  N: 'newton',
  J: 'joule',
  W: 'watt',
  V: 'volt',
  A: 'ampere',
  Hz: 'hertz',
  Pa: 'pascal',
};

function add(name: string, ...aliases: string[]): void {
  for (const a of [name, ...aliases]) ALIASES[a] = name;
}
add('millimeter', 'mm', 'millimeters', 'millimetre', 'millimetres');
add('centimeter', 'cm', 'centimeters', 'centimetre', 'centimetres');
add('meter', 'm', 'meters', 'metre', 'metres');
add('kilometer', 'km', 'kilometers', 'kilometre', 'kilometres');
add('inch', 'in', 'inches');
add('foot', 'ft', 'feet');
add('yard', 'yd', 'yds', 'yards');
add('mile', 'mi', 'miles');
add('second', 'sec', 'secs', 'seconds', 's');
add('minute', 'min', 'mins', 'minutes');
add('hour', 'hr', 'hrs', 'hours', 'h');
add('day', 'days');
add('week', 'weeks', 'wk', 'wks');
add('month', 'months');
add('year', 'years', 'yr', 'yrs');
add('milligram', 'mg', 'milligrams');
add('gram', 'g', 'grams', 'gm');
add('kilogram', 'kg', 'kilograms', 'kgs');
add('pound', 'lb', 'lbs', 'pounds');
add('ounce', 'oz', 'ounces');
add('ton', 'tons', 'tonne', 'tonnes');
add('liter', 'liters', 'litre', 'litres');
add('milliliter', 'ml', 'milliliters', 'millilitre', 'millilitres');
add('gallon', 'gal', 'gallons');
add('quart', 'qt', 'quarts');
add('pint', 'pt', 'pints');
add('degree', 'deg', 'degrees', '°');
add('radian', 'rad', 'rads', 'radians');
add('dollar', 'dollars', 'usd');
add('cent', 'cents');
add('euro', 'euros', 'eur');
add('yuan', 'rmb');
add('yen');
add('rupee', 'rupees');
add('mph');
add('kph', 'kmh');
add('acre', 'acres');
add('hectare', 'hectares', 'ha');
add('kelvin', 'kelvins');
add('celsius');
add('fahrenheit');
add('newton', 'newtons');
add('joule', 'joules');
add('watt', 'watts');
add('volt', 'volts');
add('calorie', 'calories', 'cal', 'kcal');
add('byte', 'bytes');
add('bit', 'bits');

/** Words that mean "in whatever unit the problem uses": they never refuse a pred. */
const GENERIC = new Set(['unit', 'units', 'sq', 'square', 'cubic', 'cu']);

/** Canonical name of one unit word, or null for a word that is not a known unit. */
function unitName(word: string): string | null {
  const w = word.replace(/\.$/, '');
  return CASE_SENSITIVE[w] ?? (Object.hasOwn(ALIASES, w.toLowerCase()) ? (ALIASES[w.toLowerCase()] as string) : null);
}

/**
 * The canonical unit of the words after a quantity (`square feet` -> `foot^2`, `cm`, `^3` -> `centimeter^3`,
 * `km / h` -> `kilometer/hour`), or null when a word is not a known unit or the unit is generic (`square units`).
 */
export function canonicalUnit(parts: readonly string[], power: string | null): string | null {
  let exp = power === null ? 1 : Number(power);
  if (!Number.isFinite(exp)) return null;
  const names: string[] = [];
  let generic = false;
  for (const raw of parts) {
    for (const word of raw.split(/[\s~]+|(?=\/)|(?<=\/)/).filter((w) => w.length > 0)) {
      const lower = word.toLowerCase();
      if (lower === 'square' || lower === 'sq') exp *= 2;
      else if (lower === 'cubic' || lower === 'cu') exp *= 3;
      if (GENERIC.has(lower)) {
        generic ||= lower === 'unit' || lower === 'units';
        continue;
      }
      if (word === '/' || lower === 'per') {
        names.push('/');
        continue;
      }
      const name = unitName(word);
      if (name === null) return null;
      names.push(name);
    }
  }
  if (generic || names.length === 0) return null;
  const unit = names.join('').replace(/\/$/, '');
  return exp === 1 ? unit : `${unit}^${exp}`;
}
