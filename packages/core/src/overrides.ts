/**
 * Dotted overrides (`--trainer.schedule.lr 1e-5`, `--estimatorConfig.wMin 0.3`): each path is
 * looked up in the config's JSON Schema (the one editors use, emitted from the zod schema), so an
 * unknown path is named with the keys that exist there, and the value is read as that option's
 * type (a number, a boolean, `null`, a string, or JSON for lists and objects). The zod schema
 * then checks the values as it checks a config file.
 */
import { usageError } from './errors.js';
import { didYouMean } from './suggest.js';

/** One dotted flag: `--trainer.schedule.lr 1e-5` is `{ flag: '--trainer.schedule.lr', path: ['trainer', 'schedule', 'lr'], value: '1e-5' }`. */
export interface DottedOverride {
  flag: string;
  path: string[];
  value: string;
}

/**
 * Take the dotted flags (`--a.b VALUE`, `--a.b=VALUE`) out of `argv`, up to a `--`. Each needs a
 * value; a missing one, or an empty path segment (`--a..b`), is a usage error naming the flag.
 */
export function splitDottedFlags(argv: readonly string[]): { rest: string[]; overrides: DottedOverride[] } {
  const rest: string[] = [];
  const overrides: DottedOverride[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    const m = /^--([^=]*\.[^=]*)(?:=(.*))?$/s.exec(arg);
    if (m === null) {
      rest.push(arg);
      continue;
    }
    const flag = `--${m[1]!}`;
    const path = m[1]!.split('.');
    if (path.some((p) => p === '')) throw usageError('is not a dotted option path (an empty part)', flag);
    let value = m[2];
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw usageError(`takes a value (e.g. ${flag} VALUE or ${flag}=VALUE)`, flag);
      value = next;
      i++;
    }
    overrides.push({ flag, path, value });
  }
  return { rest, overrides };
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
};

/** `config` (a parsed config file, not changed) with every override set at its path. */
export function applyOverrides(
  config: Record<string, unknown>,
  overrides: readonly DottedOverride[],
  schema: JsonSchema,
): Record<string, unknown> {
  const out = structuredClone(config);
  for (const o of overrides) {
    const leaf = schemaAt(schema, o);
    let target: Record<string, unknown> = out;
    for (const key of o.path.slice(0, -1)) {
      const next = target[key];
      if (next === null || typeof next !== 'object' || Array.isArray(next)) target[key] = {};
      target = target[key] as Record<string, unknown>;
    }
    target[o.path.at(-1)!] = readValue(o, leaf);
  }
  return out;
}

/** The schema of the option at `o.path`, or a usage error naming the flag and the keys that exist. */
function schemaAt(root: JsonSchema, o: DottedOverride): JsonSchema[] {
  let nodes = [root];
  for (const [i, key] of o.path.entries()) {
    // an unconstrained node (`{}`: a plugin backend's options, checked by its own schema later) takes any keys
    const objects = nodes
      .flatMap(alternatives)
      .map((n) => (unconstrained(n) ? { additionalProperties: {} } : n))
      .filter((n) => n.properties !== undefined || typeof n.additionalProperties === 'object');
    const where = i === 0 ? 'the config' : o.path.slice(0, i).join('.');
    if (objects.length === 0) {
      // `--estimator.wMin` where the config has `estimator` and `estimatorConfig`: point at the options
      const options = `${o.path[0]!}Config`;
      const hint = i === 1 && root.properties?.[options] !== undefined ? ` (the ${o.path[0]!}'s options are --${options}.KEY)` : '';
      throw usageError(`unknown option: ${where} takes a value, not options${hint}`, o.flag);
    }
    const next = objects.flatMap((n) =>
      n.properties !== undefined && Object.hasOwn(n.properties, key)
        ? [n.properties[key]!]
        : typeof n.additionalProperties === 'object'
          ? [n.additionalProperties]
          : [],
    );
    if (next.length === 0) {
      const keys = [...new Set(objects.flatMap((n) => Object.keys(n.properties ?? {})))].filter((k) => k !== '$schema');
      const near = didYouMean(
        key,
        keys,
        `--${o.path
          .slice(0, i)
          .map((p) => `${p}.`)
          .join('')}`,
      );
      throw usageError(`unknown option: ${where} has no key ${JSON.stringify(key)}${near} (keys: ${keys.join(', ')})`, o.flag);
    }
    nodes = next;
  }
  return nodes.flatMap(alternatives);
}

function unconstrained(n: JsonSchema): boolean {
  return (
    n.type === undefined &&
    n.properties === undefined &&
    n.additionalProperties === undefined &&
    n.enum === undefined &&
    n.const === undefined
  );
}

function alternatives(n: JsonSchema): JsonSchema[] {
  return n.anyOf !== undefined || n.oneOf !== undefined ? [...(n.anyOf ?? []), ...(n.oneOf ?? [])].flatMap(alternatives) : [n];
}

/** The flag's string read as the option's type; left a string where the option takes one (the schema check then speaks). */
function readValue(o: DottedOverride, leaf: readonly JsonSchema[]): unknown {
  const types = new Set(
    leaf.flatMap((n) =>
      n.type === undefined ? (n.enum ?? (n.const !== undefined ? [n.const] : [])).map((v) => typeof v) : [n.type].flat(),
    ),
  );
  const v = o.value;
  if (v === 'null' && types.has('null')) return null;
  if ((v === 'true' || v === 'false') && types.has('boolean')) return v === 'true';
  if ((types.has('number') || types.has('integer')) && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  if (types.has('string')) return v;
  if (types.has('array') || types.has('object') || types.size === 0) {
    try {
      return JSON.parse(v) as unknown;
    } catch {
      if (types.size === 0) return v;
      throw usageError(
        `takes JSON here (e.g. ${o.flag} '${types.has('array') ? '["a","b"]' : '{"key":1}'}'), got ${JSON.stringify(v)}`,
        o.flag,
      );
    }
  }
  return v;
}

/**
 * `parse(config)` with the overrides applied; a schema error at an overridden path is a usage
 * error naming that flag (exit 2), any other stays the config error it is.
 */
export function parseWithOverrides<T>(
  parse: (input: Record<string, unknown>) => T,
  config: Record<string, unknown>,
  overrides: readonly DottedOverride[],
  schema: JsonSchema,
): T {
  const input = applyOverrides(config, overrides, schema);
  try {
    return parse(input);
  } catch (err) {
    const issues = ((err as { cause?: { issues?: { path: PropertyKey[]; message: string }[] } }).cause?.issues ?? []).map((i) => ({
      path: i.path.map(String).join('.'),
      message: i.message,
    }));
    for (const o of [...overrides].reverse()) {
      const path = o.path.join('.');
      const hit = issues.find((i) => i.path === path || i.path.startsWith(`${path}.`));
      if (hit !== undefined) throw usageError(`${hit.message} (got ${JSON.stringify(o.value)})`, o.flag);
    }
    throw err;
  }
}
