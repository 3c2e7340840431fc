import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import {
  intFlag,
  runCommand,
  streamLogger,
  usageError,
  workersFlag,
  type CliIo,
  type Command,
  type CommandContext,
  type FlagValues,
} from '@rlvr/core';
import { BACKEND_NAMES, openPolicyDir, selectBackend } from '@rlvr/policy';
import { RolloutError } from '../errors.js';
import { startPolicyServer, type PolicyServer } from './server.js';

const USAGE = `usage: rlvr-serve --model DIR [--port 8000] [--host 127.0.0.1] [--served-model-name NAME]
           [--tokenizer SPEC] [--backend auto|${BACKEND_NAMES.join('|')}] [--batch-size 16]
           [--workers auto|N] [--max-body-bytes 33554432] [--inline-body-bytes 65536]
           [--text-timeout-ms 60000] [--headers-timeout-ms 20000] [--request-timeout-ms 120000]
           [--api-key KEY] [--quiet]

  Serve a @rlvr/policy model directory (config.json + safetensors) over the OpenAI-compatible
  protocol as vLLM speaks it: POST /v1/completions and /v1/chat/completions (streamed or not),
  GET /v1/models[/{id}], POST /tokenize, /detokenize, GET /version, /metrics, /health. Concurrent
  requests share the running decode batches (--batch-size rows on each of --workers threads). The
  first stdout line says where; Ctrl-C or SIGTERM drains the requests in flight.
  Parameters: docs/serve.md.
  --served-model-name  the name clients send as "model" (default: --model as given, as vLLM does)
  --tokenizer          tiktoken:NAME, hf:PATH, pruned:PATH or a directory (default: the model directory)
  --port 0             picks a free port
  --workers N|auto     policy worker threads decoding side by side, each with a replica of the
                       model and a batch of --batch-size rows (default auto: one per available
                       core; 1: one batch in this thread)
  --max-body-bytes     a larger request body gets a 413 at once
  --inline-body-bytes  larger bodies are parsed and tokenized in a text thread, not the server's
  --text-timeout-ms    the text thread's limit for one body (a chat template that loops): a 400
  --headers-timeout-ms a connection still sending its request's headers after this gets a 408 and
                       is closed; --request-timeout-ms: the same for the whole request (and body)
  --api-key            /v1/* then needs "Authorization: Bearer KEY" (as vLLM's --api-key)
`;

/** A started server and how to free its model. */
interface Started {
  server: PolicyServer;
  dispose(): void;
}

async function launch(values: FlagValues, io: CliIo): Promise<Started> {
  const dir = values.model as string | undefined;
  if (dir === undefined) throw usageError('is required', 'model');
  const port = intFlag(values, 'port', { min: 0, max: 65535 })!;
  const batchSize = intFlag(values, 'batch-size', { min: 1, max: 4096 })!;
  const asked = workersFlag(values) ?? 'auto';
  const workers = asked === 'auto' ? Math.min(256, availableParallelism()) : asked;
  const maxBodyBytes = intFlag(values, 'max-body-bytes', { min: 1024 })!;
  const limits = {
    inlineBodyBytes: intFlag(values, 'inline-body-bytes', { min: 0 })!,
    textTimeoutMs: intFlag(values, 'text-timeout-ms', { min: 1 })!,
    headersTimeoutMs: intFlag(values, 'headers-timeout-ms', { min: 1 })!,
    requestTimeoutMs: intFlag(values, 'request-timeout-ms', { min: 1 })!,
  };
  const apiKey = values['api-key'] as string | undefined;
  const backend = values.backend as string;
  if (backend !== 'auto' && !(BACKEND_NAMES as readonly string[]).includes(backend))
    throw usageError(`must be auto or one of ${BACKEND_NAMES.join(', ')} (got ${JSON.stringify(backend)})`, 'backend');
  const log = streamLogger(io.stderr, 'rlvr-serve');
  await selectBackend({ backend: backend as 'auto' }, log);
  const opened = openPolicyDir(dir, { trainable: false, tokenizer: values.tokenizer as string | undefined, requireEos: false });
  try {
    const { model, tokenizer, chatTemplate } = opened;
    if (chatTemplate.source === 'chatml') log.info('no tokenizer_config.json: /v1/chat/completions uses ChatML');
    if (chatTemplate.source === 'none') log.info('no tokenizer_config.json and no ChatML tokens: /v1/chat/completions is off');
    if (opened.eosTokenIds.length === 0) log.warn('the model has no end-of-sequence token: completions end at max_tokens or a stop string');
    const name = (values['served-model-name'] as string | undefined) ?? dir;
    const quiet = values.quiet === true;
    const server = await startPolicyServer(
      {
        model,
        tokenizer,
        applyChatTemplate: chatTemplate.apply,
        source: { dir, ...(values.tokenizer ? { tokenizer: values.tokenizer as string } : {}) },
      },
      {
        host: values.host as string,
        port,
        servedModelName: name,
        batchSize,
        workers,
        maxBodyBytes,
        ...limits,
        ...(apiKey ? { apiKey } : {}),
      },
      { info: (m) => (quiet ? undefined : log.info(m)), warn: (m) => log.warn(m) },
    ).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'EADDRINUSE' || e.code === 'EACCES' || e.code === 'EADDRNOTAVAIL') {
        throw new RolloutError(
          'listen_failed',
          `cannot listen on ${String(values.host)}:${port}: ${e.code}`,
          { field: '--port' },
          { cause: e },
        );
      }
      throw e;
    });
    io.stdout.write(`rlvr-serve: serving ${name} (${(model.numParameters() / 1e6).toFixed(2)}M parameters) on ${server.url}\n`);
    return { server, dispose: opened.dispose };
  } catch (e) {
    opened.dispose();
    throw e;
  }
}

/**
 * `rlvr-serve`: serve until Ctrl-C or SIGTERM, then stop taking connections, finish the requests in
 * flight (their responses, and any after, say `Connection: close`), free the model and exit 0. Exit 1 when the model directory does not open or the port
 * cannot be bound, 2 on bad usage.
 */
export const serveCommand: Command = {
  summary: 'serve a model directory over the OpenAI protocol as vLLM speaks it',
  usage: USAGE,
  graceful: true,
  options: {
    model: { type: 'string' },
    port: { type: 'string', default: '8000' },
    host: { type: 'string', default: '127.0.0.1' },
    'served-model-name': { type: 'string' },
    tokenizer: { type: 'string' },
    backend: { type: 'string', default: 'auto' },
    'batch-size': { type: 'string', default: '16' },
    workers: { type: 'string', default: 'auto' },
    'max-body-bytes': { type: 'string', default: String(32 * 1024 * 1024) },
    'inline-body-bytes': { type: 'string', default: String(64 * 1024) },
    'text-timeout-ms': { type: 'string', default: '60000' },
    'headers-timeout-ms': { type: 'string', default: '20000' },
    'request-timeout-ms': { type: 'string', default: '120000' },
    'api-key': { type: 'string' },
    quiet: { type: 'boolean', default: false },
  },
  async run({ values, io, signal }) {
    const { server, dispose } = await launch(values, io);
    if (!signal.aborted) await once(signal, 'abort');
    await server.close();
    dispose();
    return 0;
  },
};

/** What `runServe` returns: the exit code, and the running server when it started. */
export interface ServeResult {
  /** 0 serving, 1 the model directory did not open, 2 bad usage */
  code: number;
  server?: PolicyServer;
  /** frees the model and tokenizer after `server.close()` */
  dispose?: () => void;
}

/** `rlvr-serve ARGV` in process, returning once the server listens (for tests and embedding): the same flags, messages and exit codes. */
export async function runServe(argv: readonly string[], io: CliIo): Promise<ServeResult> {
  let started: Started | undefined;
  const run = async ({ values }: CommandContext): Promise<void> => {
    started = await launch(values, io);
  };
  const code = await runCommand('rlvr-serve', { ...serveCommand, run }, argv, io);
  return started === undefined ? { code } : { code, server: started.server, dispose: started.dispose };
}
