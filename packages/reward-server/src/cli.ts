#!/usr/bin/env node
/**
 * rlvr-reward-server: the reward and advantage HTTP service for OpenRLHF (`--remote_rm_url`) and verl (a custom
 * reward function that posts to it). Prints one line with the URL once it listens; SIGTERM or SIGINT drains the
 * requests in flight and exits 0 (a second signal exits at once with status 1).
 */
import { parseArgs } from 'node:util';
import { RewardServerError } from './errors.js';
import type { RewardServerOptionsInput } from './options.js';
import { RewardServer } from './server.js';

const USAGE = `usage: rlvr-reward-server [options]

Serves POST /get_reward (OpenRLHF remote reward model: {"query", "prompts", "labels"} -> {"rewards", "scores",
"extra_logs"}), POST /advantages (rlvr-advantages interop rows -> per-token advantages) and GET /health.

options:
  --port N                 TCP port (default 5000; 0 picks a free one)
  --host ADDR              interface (default 127.0.0.1: loopback only; 0.0.0.0 to serve a cluster)
  --concurrency N          verifier worker threads (default: available parallelism)
  --timeout-ms N           wall-clock budget per completion in ms (default 5000); past it: reward 0
  --max-body-bytes N       largest request body (default 67108864); larger ones get 413
  --max-in-flight N        requests handled at once (default 256); more get 503 with Retry-After
  --verify JSON            verifier options, e.g. '{"reasoningDelimiters": ["</think>"]}'
  --on-prompt-mismatch whole_query|zero
                           a query that does not contain its prompt: grade it whole (default) or give 0
  --shutdown-timeout-ms N  on SIGTERM, how long requests in flight may take to finish (default 30000)
  -h, --help               this help

exit status: 0 after a clean shutdown, 1 when the server fails, 2 for bad arguments`;

function fail(message: string, status = 2): never {
  process.stderr.write(`rlvr-reward-server: ${message}\n`);
  if (status === 2) process.stderr.write(`${USAGE}\n`);
  process.exit(status);
}

function intArg(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n)) fail(`${flag} must be an integer (got ${JSON.stringify(text)})`);
  return n;
}

function options(argv: string[]): RewardServerOptionsInput {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        concurrency: { type: 'string' },
        'timeout-ms': { type: 'string' },
        'max-body-bytes': { type: 'string' },
        'max-in-flight': { type: 'string' },
        verify: { type: 'string' },
        'on-prompt-mismatch': { type: 'string' },
        'shutdown-timeout-ms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const out: Record<string, unknown> = {};
  const set = (key: string, v: unknown) => {
    if (v !== undefined) out[key] = v;
  };
  set('port', intArg(values.port, '--port'));
  set('host', values.host);
  set('concurrency', intArg(values.concurrency, '--concurrency'));
  set('timeoutMs', intArg(values['timeout-ms'], '--timeout-ms'));
  set('maxBodyBytes', intArg(values['max-body-bytes'], '--max-body-bytes'));
  set('maxInFlight', intArg(values['max-in-flight'], '--max-in-flight'));
  set('shutdownTimeoutMs', intArg(values['shutdown-timeout-ms'], '--shutdown-timeout-ms'));
  set('onPromptMismatch', values['on-prompt-mismatch']);
  if (values.verify !== undefined) {
    try {
      out.verify = JSON.parse(values.verify);
    } catch (err) {
      fail(`--verify must be a JSON object: ${(err as Error).message}`);
    }
  }
  return out as RewardServerOptionsInput;
}

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  let server: RewardServer;
  try {
    server = await RewardServer.start(opts, (level, message) => process.stderr.write(`rlvr-reward-server: ${level}: ${message}\n`));
  } catch (err) {
    if (err instanceof RewardServerError && err.code === 'invalid_options') fail(err.message.replace(/^invalid reward server options: /, 'invalid options: '));
    fail(err instanceof Error ? err.message : String(err), 1);
  }
  process.stdout.write(`rlvr-reward-server: listening on ${server.url} (${server.concurrency} workers, timeout ${server.options.timeoutMs} ms)\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      process.stderr.write(`rlvr-reward-server: ${signal} again, exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    process.stderr.write(`rlvr-reward-server: ${signal}: draining ${server.stats.inFlight} request(s) in flight\n`);
    server.close().then(
      () => {
        process.stderr.write('rlvr-reward-server: stopped\n');
        process.exit(0);
      },
      (err: unknown) => fail(`shutdown failed: ${String(err)}`, 1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

void main();
