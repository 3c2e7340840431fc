#!/usr/bin/env node
import { runCli } from './cli/run.js';

// A closed pipe downstream (`| head`) is a normal way to stop reading.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

process.exitCode = await runCli(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });
