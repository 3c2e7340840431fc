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
  throw new CoreError('invalid_config', `invalid ${what} configuration: ${formatZodIssues(result.error.issues)}`, {}, { cause: result.error });
}

interface IssueLike {
  path: PropertyKey[];
  message: string;
  code: string;
  values?: readonly unknown[];
  keys?: readonly string[];
}

/** One line per issue: `field: message (allowed: a, b)`. */
export function formatZodIssues(issues: readonly IssueLike[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys' && issue.keys) {
        const at = path ? ` in ${path}` : '';
        return `unknown key${issue.keys.length > 1 ? 's' : ''}${at}: ${issue.keys.join(', ')}`;
      }
      let text = `${path || '(root)'}: ${issue.message}`;
      if (issue.values && issue.values.length > 0 && !issue.message.includes('expected one of')) {
        text += ` (allowed: ${issue.values.map((v) => JSON.stringify(v)).join(', ')})`;
      }
      return text;
    })
    .join('; ');
}
