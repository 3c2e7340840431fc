/**
 * "did you mean" for a mistyped name (a flag, a config key, a command): the nearest of the names
 * that exist by edit distance, letter case ignored, where it is near enough to be a typo.
 */

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of two adjacent letters each cost 1. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The name of `known` nearest to `name` (case ignored), if within a third of its length (at least 1, at most 3 edits). */
export function nearestName(name: string, known: Iterable<string>): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    if (k === name) continue;
    const dist = editDistance(name.toLowerCase(), k.toLowerCase());
    if (dist <= limit && dist < bestDistance) [best, bestDistance] = [k, dist];
  }
  return best;
}

/** ` (did you mean --steps?)`, or '' when no name of `known` is near `name`; `prefix` goes before the suggestion (`--`). */
export function didYouMean(name: string, known: Iterable<string>, prefix = ''): string {
  const near = nearestName(name, known);
  return near === undefined ? '' : ` (did you mean ${prefix}${near}?)`;
}
