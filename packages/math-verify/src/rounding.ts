/**
 * The rounding a problem statement asks for, as decimal places for the `roundTo` option: "to the nearest tenth" (1),
 * "round to two decimal places" (2), "to the nearest whole number" (0), "to the nearest cent" (2). Significant
 * figures and rounding to tens or hundreds are not decimal places and give null, as does a problem that asks for none.
 */
const WORDS: Record<string, number> = { zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10 };
const NEAREST: [RegExp, number][] = [
  [
    /nearest\s+(?:whole\s+(?:number|percent|dollar|degree|unit)|integer|dollar|degree|percent|unit|(?:whole\s+)?(?:cm|centimeter|inch|foot|meter|minute|second|hour|mile))\b/i,
    0,
  ],
  [/nearest\s+ten[\s-]*thousandths?\b/i, 4],
  [/nearest\s+thousandths?\b/i, 3],
  [/nearest\s+hundredths?\b/i, 2],
  [/nearest\s+(?:cent|penny)\b/i, 2],
  [/nearest\s+tenths?\b/i, 1],
];
const PLACES =
  /(?:to|with|within|correct to)\s+(\d+|zero|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:decimal\s+(?:places?|digits?)|places?\s+after\s+the\s+decimal(?:\s+point)?|digits?\s+after\s+the\s+decimal(?:\s+point)?|d\.\s?p\.)/i;

/** Decimal places `problem` asks the answer to be rounded to, or null. */
export function problemRounding(problem: string): number | null {
  const text = problem.slice(-4000);
  const places = PLACES.exec(text);
  if (places) {
    const n = /^\d+$/.test(places[1] as string) ? Number(places[1]) : (WORDS[(places[1] as string).toLowerCase()] as number);
    return n <= 12 ? n : null;
  }
  for (const [re, n] of NEAREST) if (re.test(text)) return n;
  return null;
}
