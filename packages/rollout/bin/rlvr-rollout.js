#!/usr/bin/env node
// `rlvr-rollout`: a committed file, not a build output, so that `npm ci` links it and makes it executable before
// anything is built; it runs the built CLI, or says how to build it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write(`rlvr-rollout: ${fileURLToPath(cli)} is not built yet; run \`npm run build\` at the repository root\n`);
  process.exit(1);
}
await import(cli.href);
