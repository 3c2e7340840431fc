import { z } from 'zod';
import { describe, expect, test } from 'vitest';
import { configJsonSchema } from './json-schema.js';

describe('configJsonSchema', () => {
  test('input side (defaults optional), $schema and extra keys first, hidden defaults dropped', () => {
    const s = configJsonSchema(z.object({ path: z.string().default('/home/me'), n: z.number().int().default(3) }).strict(), {
      title: 't',
      description: 'd',
      extra: { command: { const: 'x' } },
      hideDefaults: ['path'],
    });
    expect(s).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 't',
      description: 'd',
      additionalProperties: false,
    });
    expect(Object.keys(s.properties as object)).toEqual(['$schema', 'command', 'path', 'n']);
    expect((s.properties as Record<string, object>).path).toEqual({ type: 'string' });
    expect((s.properties as Record<string, object>).n).toMatchObject({ type: 'integer', default: 3 });
    expect(s.required).toBeUndefined();
  });
});
