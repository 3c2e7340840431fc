#!/usr/bin/env node
import { runServe } from './cli-serve.js';

const { code, server, dispose } = await runServe(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
if (!server) {
  process.exitCode = code;
} else {
  const stop = (): void => {
    void server.close().then(() => dispose?.());
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
