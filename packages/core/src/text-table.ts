/** Plain-text output of the command lines: aligned tables and percentages. */

/** `0.5123` -> `51.2%`; not a finite number (or undefined) -> `-`. */
/** `1 problem`, `2 problems`: a count with its noun (a plain `s` plural). */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function percent(x: number | undefined): string {
  return x !== undefined && Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '-';
}

/**
 * Left-aligned first column, right-aligned others, two spaces between columns; a rule of
 * dashes under the header unless `rule` is false.
 */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[], options: { rule?: boolean } = {}): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const rule = options.rule === false ? [] : [line(widths.map((w) => '-'.repeat(w)))];
  return [line(header), ...rule, ...rows.map(line)].join('\n');
}
