/**
 * The JSON Schema of a config file, emitted from its zod schema (zod 4's `z.toJSONSchema`, the
 * input side: every key with a default is optional), so that editors complete and check the file.
 */
import { z } from 'zod';

/** A JSON Schema document. */
export type JsonSchema = Record<string, unknown>;

/**
 * `schema` as a config file's JSON Schema titled `title`: a `$schema` key allowed (an editor's
 * pointer back to it), `extra` properties first, and no default shown for the keys of
 * `hideDefaults` (machine-specific or derived defaults would mislead an editor).
 */
export function configJsonSchema(
  schema: z.ZodType,
  options: { title: string; description: string; extra?: Record<string, JsonSchema>; hideDefaults?: readonly string[] },
): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema & { properties: Record<string, JsonSchema> };
  for (const key of options.hideDefaults ?? []) delete json.properties[key]?.default;
  const { $schema, ...rest } = json;
  return {
    $schema,
    title: options.title,
    description: options.description,
    ...rest,
    properties: {
      $schema: { type: 'string', description: 'the JSON Schema of this file, for editors' },
      ...options.extra,
      ...json.properties,
    },
  };
}
