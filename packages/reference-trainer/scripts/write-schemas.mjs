// Rewrite schema/*.schema.json from the zod schemas (build first: npx tsc -b packages/reference-trainer).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CONFIG_SCHEMA_FILES, configJsonSchemas } from '../dist/config-schema.js';

const schemas = configJsonSchemas();
for (const [name, file] of Object.entries(CONFIG_SCHEMA_FILES)) {
  writeFileSync(fileURLToPath(new URL(`../${file}`, import.meta.url)), JSON.stringify(schemas[name], null, 2) + '\n');
  console.log(`wrote ${file}`);
}
