/**
 * The text thread's entry (`text-thread.ts` starts it): loads the served model's tokenizer and chat
 * template, then answers one request body at a time with `prepareRequest`, exactly as the server's
 * thread would, so that parsing, templating and tokenizing a big body never block the server.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadTokenizer, modelChatTemplate } from '@rlvr/policy';
import { policyTokenBytes } from '../samplers/policy-token-bytes.js';
import { HttpError, parseBody } from './http.js';
import { prepareRequest } from './requests.js';
import type { TextTask, TextThreadInit, TextReply } from './text-thread.js';

const init = workerData as TextThreadInit;
const port = parentPort!;
try {
  const tokenizer = loadTokenizer(init.tokenizer ?? init.dir);
  const engine = {
    ...init.limits,
    tokenizer,
    tokenBytes: policyTokenBytes(tokenizer),
    applyChatTemplate: modelChatTemplate(init.dir, tokenizer).apply,
  };
  port.on('message', (task: TextTask) => {
    let reply: TextReply;
    const transfer: ArrayBuffer[] = [];
    try {
      const p = prepareRequest(engine, task.route, parseBody(Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength)));
      const ids = (list: number[]): Int32Array => {
        const a = Int32Array.from(list);
        transfer.push(a.buffer);
        return a;
      };
      if (p.kind === 'answer') {
        const json = new TextEncoder().encode(p.json);
        transfer.push(json.buffer);
        reply = { id: task.id, ok: true, kind: 'answer', json };
      } else if (p.kind === 'completions')
        reply = { id: task.id, ok: true, kind: 'completions', request: p.request, prompts: p.prompts.map(ids), maxTokens: p.maxTokens };
      else reply = { id: task.id, ok: true, kind: 'chat', request: p.request, ids: ids(p.ids), maxTokens: p.maxTokens };
    } catch (e) {
      const err = e instanceof HttpError ? e : new HttpError(500, `internal error: ${(e as Error).message}`);
      reply = { id: task.id, ok: false, status: err.status, message: err.message, param: err.param };
    }
    port.postMessage(reply, transfer);
  });
  port.postMessage({ ready: true });
} catch (e) {
  port.postMessage({ failed: (e as Error).message });
}
