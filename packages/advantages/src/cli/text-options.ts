/**
 * Estimator options written as text, the way a command line (`--sigma-w 0.5`) or a query string
 * (`?sigma-w=0.5`) gives them: kebab-case names, values that are numbers, booleans or strings.
 */

/** `sigma-w` -> `sigmaW` (a camelCase name stays as it is). */
export function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `sigmaW` -> `sigma-w`. */
export function kebabCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

/** `0.5` -> 0.5, `true` -> true, anything else stays a string (the estimator's schema then names the field if it is wrong). */
export function optionValue(text: string): unknown {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  return text;
}

/** Estimator options from `[name, text]` pairs: names in kebab- or camelCase, values as `optionValue` reads them. */
export function optionsFromText(pairs: Iterable<readonly [string, string]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, text] of pairs)
    Object.defineProperty(out, camelCase(name), { value: optionValue(text), enumerable: true, writable: true, configurable: true });
  return out;
}
