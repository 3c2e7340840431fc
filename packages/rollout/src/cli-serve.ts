import { existsSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CoreError } from '@rlvr/core';
import { BACKEND_NAMES, PolicyError, openPolicyDir, selectBackend, type PolicyDir } from '@rlvr/policy';
import type { CliIo } from './cli-io.js';
import { startPolicyServer, type PolicyServer } from './serve.js';

export const SERVE_USAGE = `rlvr-serve --model DIR [--port 8000] [--host 127.0.0.1] [--served-model-name NAME]
           [--tokenizer SPEC] [--backend auto|${BACKEND_NAMES.join('|')}] [--batch-size 16] [--quiet]
  Serve a @rlvr/policy model directory (config.json + safetensors) over the OpenAI-compatible
  protocol as vLLM speaks it: POST /v1/completions, POST /v1/chat/completions, GET /v1/models,
  GET /health. Requests are decoded one at a time in arrival order.
  --tokenizer  tiktoken:NAME, hf:PATH, pruned:PATH or a directory (default: the model directory)
  --port 0     picks a free port (printed on the first line)
`;

export interface ServeResult {
  /** 0 serving, 1 the model or tokenizer could not be loaded, 2 bad usage */
  code: number;
  server?: PolicyServer;
  /** frees the model and tokenizer after `server.close()` */
  dispose?: () => void;
}

/**
 * The `rlvr-serve` command line, minus the process: load, listen, report the URL on stdout.
 * Returns the running server (the bin keeps the process alive and closes it on SIGINT/SIGTERM).
 */
export async function runServe(argv: readonly string[], io: CliIo): Promise<ServeResult> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        model: { type: 'string' },
        port: { type: 'string', default: '8000' },
        host: { type: 'string', default: '127.0.0.1' },
        'served-model-name': { type: 'string' },
        tokenizer: { type: 'string' },
        backend: { type: 'string', default: 'auto' },
        'batch-size': { type: 'string', default: '16' },
        quiet: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    io.stderr.write(`rlvr-serve: ${(e as Error).message}\n${SERVE_USAGE}`);
    return { code: 2 };
  }
  if (values.help) {
    io.stdout.write(SERVE_USAGE);
    return { code: 0 };
  }
  const usage = (msg: string): ServeResult => (io.stderr.write(`rlvr-serve: ${msg}\n${SERVE_USAGE}`), { code: 2 });
  const dir = values.model as string | undefined;
  if (dir === undefined) return usage('--model is required');
  const port = Number(values.port);
  const batchSize = Number(values['batch-size']);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return usage(`--port must be an integer in [0, 65535], got ${String(values.port)}`);
  if (!Number.isInteger(batchSize) || batchSize < 1) return usage(`--batch-size must be a positive integer, got ${String(values['batch-size'])}`);
  const backend = values.backend as string;
  if (backend !== 'auto' && !(BACKEND_NAMES as readonly string[]).includes(backend)) return usage(`--backend must be auto or one of ${BACKEND_NAMES.join(', ')}, got ${backend}`);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    io.stderr.write(`rlvr-serve: --model ${dir} is not a directory\n`);
    return { code: 1 };
  }
  const log = (s: string) => io.stderr.write(`rlvr-serve: ${s}\n`);
  let opened: PolicyDir | undefined;
  try {
    await selectBackend({ backend: backend as 'auto' }, { info: log });
    opened = openPolicyDir(dir, { trainable: false, tokenizer: values.tokenizer as string | undefined, requireEos: false });
    const { model, tokenizer, chatTemplate } = opened;
    if (chatTemplate.source === 'chatml') log('no tokenizer_config.json: /v1/chat/completions uses ChatML');
    if (chatTemplate.source === 'none') log('no tokenizer_config.json and no ChatML tokens: /v1/chat/completions is off');
    if (opened.eosTokenIds.length === 0) log('the model has no end-of-sequence token: completions end at max_tokens or a stop string');
    const name = (values['served-model-name'] as string | undefined) ?? basename(resolve(dir));
    const quiet = values.quiet === true;
    const server = await startPolicyServer({ model, tokenizer, applyChatTemplate: chatTemplate.apply }, { host: values.host as string, port, servedModelName: name, batchSize }, {
      info: (m) => (quiet ? undefined : log(m)),
      warn: (m) => log(m),
    });
    io.stdout.write(`rlvr-serve: serving ${name} (${(model.numParameters() / 1e6).toFixed(2)}M parameters) on ${server.url}\n`);
    return { code: 0, server, dispose: opened.dispose };
  } catch (e) {
    opened?.dispose();
    if (e instanceof PolicyError || e instanceof CoreError) {
      io.stderr.write(`rlvr-serve: ${e.message}\n`);
      return { code: 1 };
    }
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE' || (e as NodeJS.ErrnoException).code === 'EACCES') {
      io.stderr.write(`rlvr-serve: cannot listen on ${String(values.host)}:${port}: ${(e as Error).message}\n`);
      return { code: 1 };
    }
    throw e;
  }
}
