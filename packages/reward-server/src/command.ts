/**
 * `rlvr-reward-server`: the reward and advantage HTTP service for OpenRLHF (`--remote_rm_url`) and verl (a custom
 * reward function that posts to it), on core's CLI layout. Prints one line with the URL once it listens; the first
 * SIGTERM or SIGINT drains the requests in flight and exits 0 (a second one exits 130 at once).
 */
import { intFlag, streamLogger, usageError, type Command, type CommandContext } from '@rlvr/core';
import { RewardServerError } from './errors.js';
import type { RewardServerOptionsInput } from './options.js';
import { RewardServer } from './server.js';

const USAGE = `usage: rlvr-reward-server [options]

Serves POST /get_reward (OpenRLHF remote reward model: {"query", "prompts", "labels"} -> {"rewards", "scores",
"extra_logs"}), POST /advantages (rlvr-advantages interop rows -> per-token advantages) and GET /health.

options:
  --port N                  TCP port (default 5000; 0 picks a free one)
  --host ADDR               interface (default 127.0.0.1: loopback only; 0.0.0.0 to serve a cluster)
  --concurrency N           verifier worker threads (default: available parallelism)
  --timeout-ms N            wall-clock budget per completion in ms (default 5000); past it: reward 0
  --max-body-bytes N        largest request body (default 67108864); larger ones get 413
  --max-in-flight N         requests handled at once once their body has arrived (default 256); more get 503
                            with Retry-After
  --max-receiving N         request bodies received at once (default 1024); more get 503 with Retry-After
  --body-timeout-ms N       a body must arrive whole within this of its headers (default 60000); else 408 and
                            the connection is closed
  --max-advantage-tokens N  /advantages: most tokens (sum of the rows' length) per request (default 4194304); more get 413
  --max-row-tokens N        /advantages: most tokens of one row (default 1048576); more get 413
  --advantage-workers N     /advantages worker threads (default: available parallelism, at most 4)
  --worker-memory-mb N      heap limit of each worker thread in MiB (default 1024)
  --verify JSON             verifier options, e.g. '{"reasoningDelimiters": ["</think>"]}'
  --on-prompt-mismatch whole_query|zero
                            a query that does not contain its prompt: grade it whole (default) or give 0
  --problem auto|field|off  the problem each item is graded with: the request's "problems", else its prompt
                            (auto, default); only "problems" (field); none (off)
  --shutdown-timeout-ms N   on SIGTERM, how long requests in flight may take to finish (default 30000)
  -h, --help                this help

exit status: 0 after a clean shutdown, 1 when the server cannot start, 2 for bad arguments, 130 on a second signal`;

/** Integer flags: flag name -> option key. */
const INTS = {
  port: 'port',
  concurrency: 'concurrency',
  'timeout-ms': 'timeoutMs',
  'max-body-bytes': 'maxBodyBytes',
  'max-in-flight': 'maxInFlight',
  'max-receiving': 'maxReceiving',
  'body-timeout-ms': 'bodyTimeoutMs',
  'max-advantage-tokens': 'maxAdvantageTokens',
  'max-row-tokens': 'maxRowTokens',
  'advantage-workers': 'advantageWorkers',
  'worker-memory-mb': 'workerMemoryMb',
  'shutdown-timeout-ms': 'shutdownTimeoutMs',
} as const;

export const rewardServerCommand: Command = {
  summary: 'the reward (/get_reward) and advantage (/advantages) HTTP service for OpenRLHF and verl',
  usage: USAGE,
  options: {
    ...Object.fromEntries(Object.keys(INTS).map((flag) => [flag, { type: 'string' as const }])),
    host: { type: 'string' },
    verify: { type: 'string' },
    'on-prompt-mismatch': { type: 'string' },
    problem: { type: 'string' },
  },
  graceful: true,
  run,
};

/** The server options the flags give (range checks are the options schema's, which names the field). */
function optionsOf(values: CommandContext['values']): RewardServerOptionsInput {
  const out: Record<string, unknown> = {};
  for (const [flag, key] of Object.entries(INTS)) {
    const n = intFlag(values, flag);
    if (n !== undefined) out[key] = n;
  }
  if (typeof values.host === 'string') out.host = values.host;
  if (typeof values['on-prompt-mismatch'] === 'string') out.onPromptMismatch = values['on-prompt-mismatch'];
  if (typeof values.problem === 'string') out.problem = values.problem;
  if (typeof values.verify === 'string') {
    try {
      out.verify = JSON.parse(values.verify);
    } catch (err) {
      throw usageError(`must be a JSON object: ${(err as Error).message}`, '--verify');
    }
  }
  return out as RewardServerOptionsInput;
}

async function run(ctx: CommandContext): Promise<number> {
  const { io, prog } = ctx;
  const log = streamLogger(io.stderr, prog);
  let server: RewardServer;
  try {
    server = await RewardServer.start(optionsOf(ctx.values), log);
  } catch (err) {
    // bad options are bad usage: the message names each field and the allowed values
    if (err instanceof RewardServerError && err.code === 'invalid_options')
      throw usageError(err.message.replace(/^invalid reward server options: /, 'invalid options: '));
    throw err;
  }
  io.stdout.write(
    `${prog}: listening on ${server.url} (${server.concurrency} verifier workers, ${server.advantageWorkers} advantage workers, timeout ${server.options.timeoutMs} ms)\n`,
  );
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) resolve();
    else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  log.info(`interrupted: draining ${server.stats.inFlight} request(s) in flight (a second signal exits at once)`);
  await server.close();
  log.info('stopped');
  return 0;
}
