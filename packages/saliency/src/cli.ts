#!/usr/bin/env node
import { runCli } from './cli-main.js';

const code = await runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
});
process.exitCode = code;
