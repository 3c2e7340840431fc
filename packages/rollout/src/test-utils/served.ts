/**
 * `rlvr-serve` on a tiny real model for the server tests, with independent references computed
 * from the same checkpoint in process: greedy decoding by recomputing `model.logits` over the
 * growing sequence (with the OpenAI / vLLM logit changes written out here, from their
 * definitions), and log-softmax of every position.
 */
import * as tf from '@tensorflow/tfjs-core';
import { loadModel, loadTokenizer, type Qwen3Model, type Tokenizer } from '@rlvr/policy';
import { runServe } from '../serve/command.js';
import type { PolicyServer } from '../serve/server.js';
import { tinyModelDir, useCpu } from './tiny-policy.js';

export interface Served {
  server: PolicyServer;
  /** the server's origin, without `/v1` */
  origin: string;
  dir: string;
  model: Qwen3Model;
  tokenizer: Tokenizer;
  stderr: () => string;
  close(): Promise<void>;
}

/**
 * A tiny model directory served on a free loopback port as `tiny` (cpu backend), and the same model in
 * process. `quiet: false` keeps the server's startup lines in `stderr()`.
 */
export async function serveTiny(extraArgs: string[] = [], { quiet = true }: { quiet?: boolean } = {}): Promise<Served> {
  await useCpu();
  const dir = await tinyModelDir();
  let stderr = '';
  const io = {
    stdout: { write: () => true },
    stderr: {
      write: (s: string) => {
        stderr += s;
        return true;
      },
    },
  };
  const r = await runServe(
    ['--model', dir.dir, '--port', '0', '--served-model-name', 'tiny', '--backend', 'cpu', ...(quiet ? ['--quiet'] : []), ...extraArgs],
    io,
  );
  if (r.server === undefined) throw new Error(`rlvr-serve did not start: ${stderr}`);
  const model = loadModel(dir.dir, { trainable: false });
  const tokenizer = loadTokenizer(dir.dir);
  const server = r.server;
  return {
    server,
    origin: server.url.replace(/\/v1$/, ''),
    dir: dir.dir,
    model,
    tokenizer,
    stderr: () => stderr,
    close: async () => {
      await server.close();
      r.dispose?.();
      model.dispose();
      tokenizer.free();
      dir.remove();
    },
  };
}

/** Raw HTTP: status, headers and parsed JSON (or text) of a request to the server. */
export async function call(
  s: Pick<Served, 'origin'>,
  path: string,
  body?: unknown,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const res = await fetch(s.origin + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    ...init,
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON (an event stream, metrics)
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** The events of a server-sent event stream: every `data:` payload parsed, and whether it ended with `[DONE]`. */
export function sseEvents(text: string): { events: any[]; done: boolean } {
  const datas = text
    .split('\n\n')
    .filter((b) => b.trim() !== '')
    .map((b) => {
      if (!b.startsWith('data: ')) throw new Error(`not an SSE data event: ${JSON.stringify(b)}`);
      return b.slice('data: '.length);
    });
  const done = datas.at(-1) === '[DONE]';
  return { events: (done ? datas.slice(0, -1) : datas).map((d) => JSON.parse(d)), done };
}

/** Next-token logits `[V]` of `ids`, from a full forward pass (float32, as the sampler holds them). */
export function nextLogits(model: Qwen3Model, ids: readonly number[]): Float32Array {
  return tf.tidy(() => {
    const logits = model.logits({ ids: tf.tensor2d([[...ids]], undefined, 'int32') });
    return Float32Array.from(tf.slice(logits, [0, ids.length - 1, 0], [1, 1, model.dims.V]).dataSync());
  });
}

/** log-softmax of a row at temperature T (T = 1 for 0). */
export function logSoftmax(row: ArrayLike<number>, temperature = 1): Float64Array {
  const invT = temperature === 0 ? 1 : 1 / temperature;
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]!);
  let z = 0;
  for (let i = 0; i < row.length; i++) z += Math.exp((row[i]! - max) * invT);
  return Float64Array.from(row, (x) => (x - max) * invT - Math.log(z));
}

/**
 * Greedy decoding by full recomputation, with `process(logits, outputSoFar)` applied to each
 * row of logits first (the reference for penalties, biases and masks); ends at `eos` or after
 * `steps` tokens.
 */
export function greedyReference(
  model: Qwen3Model,
  prompt: readonly number[],
  steps: number,
  process: (logits: Float32Array, out: readonly number[]) => void = () => undefined,
  eos: ReadonlySet<number> = new Set(),
): number[] {
  const out: number[] = [];
  for (let t = 0; t < steps; t++) {
    const logits = nextLogits(model, [...prompt, ...out]);
    process(logits, out);
    let best = 0;
    for (let v = 1; v < logits.length; v++) if (logits[v]! > logits[best]!) best = v;
    out.push(best);
    if (eos.has(best)) break;
  }
  return out;
}
