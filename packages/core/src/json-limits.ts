/**
 * Parsed JSON from strangers, made safe to look at: a depth check that cannot overflow the stack
 * (`JSON.parse` does not recurse, but schema checks, `JSON.stringify` and error formatting do), and a
 * bounded preview of any value for error messages (a 10,000-string array is not echoed back whole).
 */

/** Where a value nests too deep: the keys down to the first array or object past the limit. */
export interface DepthExceeded {
  /** keys from the top: `['messages', 0, 'content', 0, ...]`, at most `maxDepth + 1` of them */
  path: (string | number)[];
}

/**
 * The first place where `value` nests more than `maxDepth` arrays and objects (the top one counts
 * as 1), or null. Iterative (an explicit stack), so any depth is safe; visits each container once.
 */
export function jsonDepthExceeded(value: unknown, maxDepth: number): DepthExceeded | null {
  if (value === null || typeof value !== 'object') return null;
  // parent pointers, so the path is rebuilt only for the one container that is too deep
  const keys: (string | number | null)[] = [null];
  const parents: number[] = [-1];
  const stack: { node: object; at: number; depth: number }[] = [{ node: value, at: 0, depth: 1 }];
  while (stack.length > 0) {
    const { node, at, depth } = stack.pop()!;
    if (depth > maxDepth) {
      const path: (string | number)[] = [];
      for (let i = at; parents[i]! >= 0; i = parents[i]!) path.push(keys[i]!);
      return { path: path.reverse() };
    }
    const visit = (key: string | number, child: unknown): void => {
      if (child === null || typeof child !== 'object') return;
      keys.push(key);
      parents.push(at);
      stack.push({ node: child, at: keys.length - 1, depth: depth + 1 });
    };
    if (Array.isArray(node)) for (let i = node.length - 1; i >= 0; i--) visit(i, node[i]);
    else for (const k of Object.keys(node).reverse()) visit(k, (node as Record<string, unknown>)[k]);
  }
  return null;
}

/**
 * `value` as JSON for an error message, cut after `max` characters with "…". The work is bounded by
 * `max`, not by the value (a 32 MiB array costs as much as a short one), and it never throws: deep
 * nesting, cycles, functions and bigints are written as far as the budget goes.
 */
export function previewValue(value: unknown, max = 200): string {
  let out = '';
  const emit = (s: string): boolean => {
    out += s;
    return out.length <= max;
  };
  // each level writes at least one character, so the recursion is at most `max` deep
  const walk = (v: unknown): boolean => {
    if (typeof v === 'string') return emit(JSON.stringify(v.length > max ? v.slice(0, max + 1) : v));
    if (v === null || typeof v !== 'object') {
      const s = typeof v === 'number' || typeof v === 'boolean' ? JSON.stringify(v) : String(v);
      return emit(s);
    }
    if (Array.isArray(v)) {
      if (!emit('[')) return false;
      for (let i = 0; i < v.length; i++) if ((i > 0 && !emit(',')) || !walk(v[i])) return false;
      return emit(']');
    }
    if (!emit('{')) return false;
    let first = true;
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      if ((!first && !emit(',')) || !emit(`${JSON.stringify(k.length > max ? k.slice(0, max + 1) : k)}:`)) return false;
      first = false;
      if (!walk((v as Record<string, unknown>)[k])) return false;
    }
    return emit('}');
  };
  walk(value);
  return out.length > max ? `${out.slice(0, max)}…` : out;
}
