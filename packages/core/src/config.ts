import type { z } from 'zod';
import { CoreError } from './errors.js';

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
    `invalid ${what} configuration: ${formatZodIssues(result.error.issues, input)}`,
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
 * the offending value is quoted, since zod 4 does not keep it in the issue.
 */
export function formatZodIssues(issues: readonly IssueLike[], input?: unknown): string {
  return issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys' && issue.keys) {
        const at = path ? ` in ${path}` : '';
        return `unknown key${issue.keys.length > 1 ? 's' : ''}${at}: ${issue.keys.join(', ')}`;
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

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let v: unknown = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}
