import type { z } from 'zod';
import { CoreError } from './errors.js';
import { didYouMean } from './suggest.js';

/**
 * Parse configuration with a zod schema, or throw a `CoreError('invalid_config')`
 * whose message names every bad field and, for enums and literals, the allowed values.
 * `what` says whose configuration it is (`estimator grail`), so the message reads on its own.
 */
export function parseConfig<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  throw new CoreError(
    'invalid_config',
    `invalid ${what} configuration: ${formatZodIssues(result.error.issues, input, schema)}`,
    {},
    { cause: result.error },
  );
}

/** The part of a zod issue `formatZodIssues` reads. */
export interface IssueLike {
  path: PropertyKey[];
  message: string;
  code: string;
  values?: readonly unknown[];
  keys?: readonly string[];
}

/**
 * One clause per issue: `field: message (allowed: a, b; got x)`. With `input`,
 * the offending value is quoted, since zod 4 does not keep it in the issue. With `schema`,
 * an unknown key near a known one is named with it (`unknown key in rollout: groupsize (did you mean groupSize?)`).
 */
export function formatZodIssues(issues: readonly IssueLike[], input?: unknown, schema?: z.ZodType): string {
  return issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys' && issue.keys) {
        const at = path ? ` in ${path}` : '';
        const known = schema === undefined ? [] : keysAt(schema, issue.path);
        const keys = issue.keys.map((k) => `${k}${didYouMean(k, known)}`);
        return `unknown key${issue.keys.length > 1 ? 's' : ''}${at}: ${keys.join(', ')}`;
      }
      const got = input === undefined ? undefined : valueAt(input, issue.path);
      const gotText = got === undefined ? '' : `got ${JSON.stringify(got)}`;
      if (issue.values && issue.values.length > 0) {
        const allowed = issue.values.map((v) => JSON.stringify(v)).join(', ');
        return `${path || '(root)'}: must be one of ${allowed}${gotText ? ` (${gotText})` : ''}`;
      }
      return `${path || '(root)'}: ${issue.message}${gotText ? ` (${gotText})` : ''}`;
    })
    .join('; ');
}

/** A zod 4 schema's definition, as far as `keysAt` reads it. */
interface SchemaDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  getter?: () => z.ZodType;
}

/** The keys the objects at `path` of `schema` take (through optional, default, union, pipe, array and record). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const inner = (n: z.ZodType): z.ZodType[] => {
    const d = (n as unknown as { _zod: { def: SchemaDef } })._zod.def;
    const next = [d.innerType, d.in, d.out, d.left, d.right, ...(d.options ?? []), d.getter?.()].filter((x) => x !== undefined);
    return d.type === 'object' || d.type === 'array' || d.type === 'record' ? [n] : next.flatMap(inner);
  };
  const def = (n: z.ZodType): SchemaDef => (n as unknown as { _zod: { def: SchemaDef } })._zod.def;
  let nodes = inner(schema);
  for (const key of path) {
    nodes = nodes
      .flatMap((n) => {
        const d = def(n);
        if (typeof key === 'number') return d.element === undefined ? [] : [d.element];
        return d.shape?.[String(key)] !== undefined ? [d.shape[String(key)]!] : d.valueType === undefined ? [] : [d.valueType];
      })
      .flatMap(inner);
  }
  return [...new Set(nodes.flatMap((n) => Object.keys(def(n).shape ?? {})))];
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let v: unknown = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}
