import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { prepareEstimator } from '@rlvr/advantages';
import { z } from 'zod';
import { describe, expect, test } from 'vitest';
import { CONFIG_SCHEMA_FILES, configJsonSchemas } from './config-schema.js';
import { parsePretrainConfig } from './pretrain/config.js';
import { parseTrainConfig, runConfigOf } from './train/config.js';

const pkg = (p: string) => fileURLToPath(new URL(`../${p}`, import.meta.url));
const readJson = (p: string) => JSON.parse(readFileSync(pkg(p), 'utf8')) as Record<string, unknown>;
/** A validator built from the committed JSON Schema alone (zod 4's `z.fromJSONSchema`), independent of the zod schema it was emitted from. */
const fromFile = (file: string) => {
  const schema = z.fromJSONSchema(readJson(file) as Parameters<typeof z.fromJSONSchema>[0]);
  const validate = (v: unknown): boolean => {
    const r = schema.safeParse(v);
    validate.errors = r.success ? null : r.error.issues;
    return r.success;
  };
  validate.errors = null as unknown;
  return validate;
};
const validators = Object.fromEntries(Object.entries(CONFIG_SCHEMA_FILES).map(([name, file]) => [name, fromFile(file)]));

describe('the JSON Schemas of the config files', () => {
  test('the committed schema/*.json are what the zod schemas emit (npm run schema -w @rlvr/reference-trainer rewrites them)', () => {
    const emitted = configJsonSchemas();
    for (const [name, file] of Object.entries(CONFIG_SCHEMA_FILES))
      expect(readJson(file), file).toEqual(JSON.parse(JSON.stringify(emitted[name as keyof typeof emitted])));
  });

  test('every shipped example validates against the schema its $schema names, and parses with the zod schema', () => {
    const examples = readdirSync(pkg('examples')).filter((f) => f.endsWith('.json'));
    expect(examples.length).toBeGreaterThanOrEqual(4);
    for (const f of examples) {
      const config = readJson(`examples/${f}`);
      const name = Object.entries(CONFIG_SCHEMA_FILES).find(([, file]) => String(config.$schema) === `../${file}`)?.[0];
      expect(name, `${f}: $schema`).toBeDefined();
      const validate = validators[name!]!;
      expect(validate(config), `${f}: ${JSON.stringify(validate.errors)}`).toBe(true);
      if (name === 'pretrain') parsePretrainConfig(config, f);
      else {
        const { estimatorConfigs: _e, ...train } = config;
        parseTrainConfig(train, f);
      }
    }
  });

  test("a train run directory's config.json (resolved options, command) validates and parses again", () => {
    const config = parseTrainConfig({ estimator: 'grail', steps: 3 });
    const record = JSON.parse(JSON.stringify(runConfigOf(config, prepareEstimator('grail', config.estimatorConfig).config))) as Record<
      string,
      unknown
    >;
    expect(record.estimatorConfig).toMatchObject({ wMin: 0.5, wMax: 5, symmetry: 'wrong' });
    expect(validators.train!(record), JSON.stringify(validators.train!.errors)).toBe(true);
    expect(parseTrainConfig(record)).toEqual({ ...config, estimatorConfig: record.estimatorConfig });
  });

  test('what the zod schema refuses, the JSON Schema refuses too: an unknown key, a wrong type, a bad enum value', () => {
    const train = validators.train!;
    for (const bad of [
      { stepz: 3 },
      { steps: 'ten' },
      { rollout: { prompts: 0 } },
      { backend: 'gpu' },
      { trainer: { schedule: { lr: '1e-5' } } },
      { data: { train: 'x.jsonl', format: 'gsm9k' } },
    ]) {
      expect(train(bad), JSON.stringify(bad)).toBe(false);
      expect(() => parseTrainConfig(bad)).toThrow(/invalid train config/);
    }
    expect(validators.pretrain!({ model: { hidden_size: 4 } })).toBe(false);
  });
});
