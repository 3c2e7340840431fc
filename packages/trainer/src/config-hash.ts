import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level, so equal configs serialise equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** sha256 of the canonical JSON of a config: what a checkpoint records to refuse a foreign resume. */
export function configHash(config: unknown): string {
  return createHash('sha256').update(canonicalJson(config)).digest('hex');
}

/** Dotted paths of the leaves where two configs differ (`optimizer.lr`, `estimator`). */
export function configDiff(a: unknown, b: unknown, prefix = ''): string[] {
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => configDiff(a[k], b[k], prefix ? `${prefix}.${k}` : k));
  }
  return canonicalJson(a) === canonicalJson(b) ? [] : [prefix || '(root)'];
}
