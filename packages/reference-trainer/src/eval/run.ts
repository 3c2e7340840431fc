import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Rng } from '@rlvr/core';
import { mathReward } from '@rlvr/math-verify';
import { loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import type { Qwen3Model, Tokenizer } from '@rlvr/policy';
import { chatmlTemplate, httpSampler, loadTasks, modelChatTemplate, plainChatTemplate, policySampler, promptBuilder } from '@rlvr/rollout';
import type { ApplyChatTemplate, DatasetPreset, PromptBuilder, SamplePrompt, Sampler, SamplingParams, Task } from '@rlvr/rollout';
import { ReferenceTrainerError } from '../errors.js';
import { datasetNames, parseEvalOptions } from './options.js';
import type { EvalOptions, EvalOptionsInput } from './options.js';
import { averageScores, scoreDataset } from './score.js';
import type { DatasetScore, EvalMetrics, SampleOutcome } from './score.js';

/** The new-token limit of the reference protocol (and the default where the context allows it). */
export const DEFAULT_MAX_TOKENS = 8192;

/** Where progress goes: the CLI prints it; library code never does. */
export interface EvalLogger {
  info(message: string): void;
  warn?(message: string): void;
  /** after every chunk of problems */
  progress?(p: EvalProgress): void;
}

export interface EvalProgress {
  /** the dataset's table name */
  dataset: string;
  /** 0-based index of the dataset, and how many there are */
  index: number;
  datasets: number;
  /** problems of this dataset sampled and graded so far */
  done: number;
  problems: number;
}

/** What was sampled from. */
export type EvalPolicy =
  | { kind: 'model'; dir: string; parameters: number; backend: string; eosTokenIds: number[]; template: string }
  | { kind: 'endpoint'; url: string; model: string; api: 'completions' | 'chat'; template: string };

/** One dataset's result. */
export interface EvalDatasetResult extends DatasetScore {
  name: string;
  file: string;
  preset: DatasetPreset;
  /** [problems] 1-based line of each problem in its file */
  lines: number[];
  /** [problems] the rows' ids, when the preset names an id field */
  ids?: string[];
  seconds: number;
}

/**
 * The options as run: the API key is never recorded; `maxTokens` and `template` resolved; the
 * server options (`chat`, `concurrency`) only with an endpoint, `batchSize` and `backend` only with a model.
 */
export type EvalRunOptions = Omit<EvalOptions, 'apiKey' | 'maxTokens' | 'template' | 'chat' | 'concurrency' | 'batchSize' | 'backend'> &
  Partial<Pick<EvalOptions, 'chat' | 'concurrency' | 'batchSize' | 'backend'>> & { maxTokens: number; template: string };

/** What `runEval` returns and `rlvr eval` writes as JSON. */
export interface EvalResult {
  format: 'rlvr-eval/1';
  options: EvalRunOptions;
  policy: EvalPolicy;
  datasets: EvalDatasetResult[];
  /** plain mean over datasets (each benchmark counts once) */
  average: EvalMetrics;
  /** weighted by problems (every problem counts once) */
  weighted: EvalMetrics;
  startedAt: string;
  seconds: number;
}

interface LoadedDataset {
  name: string;
  file: string;
  preset: DatasetPreset;
  tasks: Task[];
}

/** A way to sample: the sampler, the prompt of a question, the token limit, cleanup. */
interface Engine {
  policy: EvalPolicy;
  sampler: Sampler;
  prompts: Map<string, SamplePrompt>;
  maxTokens: number;
  /** problems per `sample` call: the progress granularity */
  chunk: number;
  /** set by the caller: called once per problem answered, for samplers that report as they go */
  onAnswered?: (() => void) | undefined;
  /** set by the caller: request `request` of the current `sample` call failed for good */
  onFailed?: ((request: number, reason: string) => void) | undefined;
  /** the completion text when the sampler returned none */
  text(tokens: readonly number[]): string;
  close(): void;
}

/**
 * The evaluation protocol of the reference (grail-reference.md §4): `n` samples per problem
 * (temperature 0.6, top-p 0.95, top-k 20 by default), each graded by `mathReward` against the
 * gold answer (the last `\boxed{}` of the completion); per dataset the mean accuracy (mean over
 * problems of correct / n), the unbiased pass@1 and pass@n, mean completion tokens and the
 * fraction cut by the token limit; averaged over datasets plainly and weighted by problems.
 *
 * Samples come from a local model directory (the `@rlvr/policy` KV-cache sampler) or from an
 * OpenAI-compatible server (vLLM, `rlvr-serve`). Every problem's seed is derived from `seed` and
 * its question, so the same seed gives the same samples on the local model (and on servers that
 * honour `seed`), whatever the dataset order or `limit`.
 *
 * Everything that can fail early does, before any sampling: the options, the dataset files (a
 * missing file or bad row names file, line and field), the model or the server's GET /models.
 * A sample that fails (a server error after retries) fails the whole evaluation.
 */
export async function runEval(input: EvalOptionsInput | EvalOptions, logger: EvalLogger = { info() {} }): Promise<EvalResult> {
  const o = parseEvalOptions(input);
  const started = new Date();
  const t0 = performance.now();
  const datasets = await loadDatasets(o);
  const questions = [...new Set(datasets.flatMap((d) => d.tasks.map((t) => t.question)))];
  const engine = o.model !== undefined ? await localEngine(o, o.model, questions, logger) : await endpointEngine(o, o.endpoint!, questions, logger);
  try {
    const { apiKey: _k, maxTokens: _m, template: _t, ...rest } = o;
    // only the options that applied: no server options for a local model and the other way round
    const { chat: _c, concurrency: _n, ...local } = rest;
    const { batchSize: _b, backend: _d, ...remote } = rest;
    const options: EvalRunOptions = { ...(o.model !== undefined ? local : remote), maxTokens: engine.maxTokens, template: engine.policy.template } as EvalRunOptions;
    logger.info(`${describePolicy(engine.policy)}; ${datasets.length} dataset(s), ${o.n} sample(s) per problem, temperature ${o.temperature}, top-p ${o.temperature === 0 ? 1 : o.topP}, top-k ${o.temperature === 0 || o.topK === 0 ? 'off' : o.topK}, max ${engine.maxTokens} tokens`);
    const results: EvalDatasetResult[] = [];
    for (const [index, d] of datasets.entries()) results.push(await evalDataset(o, engine, d, index, datasets.length, logger));
    return {
      format: 'rlvr-eval/1',
      options,
      policy: engine.policy,
      datasets: results,
      average: averageScores(results, 'mean'),
      weighted: averageScores(results, 'weighted'),
      startedAt: started.toISOString(),
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    engine.close();
  }
}

/** The seed of a problem's samples: the run seed and the question, nothing else. */
export function problemSeed(seed: number, question: string): number {
  return new Rng(`rlvr-eval|${seed}|${question}`).uint32();
}

async function evalDataset(o: EvalOptions, engine: Engine, d: LoadedDataset, index: number, datasets: number, logger: EvalLogger): Promise<EvalDatasetResult> {
  const t0 = performance.now();
  const greedy = o.temperature === 0;
  const params = (question: string): SamplingParams => ({
    temperature: o.temperature,
    topP: greedy ? 1 : o.topP,
    topK: greedy ? 0 : o.topK,
    maxNewTokens: engine.maxTokens,
    stop: [],
    seed: problemSeed(o.seed, question),
  });
  const outcomes: SampleOutcome[][] = [];
  logger.progress?.({ dataset: d.name, index, datasets, done: 0, problems: d.tasks.length });
  let answered = 0;
  engine.onAnswered = () => logger.progress?.({ dataset: d.name, index, datasets, done: Math.min(++answered, d.tasks.length), problems: d.tasks.length });
  const from = engine.policy.kind === 'endpoint' ? engine.policy.url : engine.policy.dir;
  const failure = (task: Task, reason: string) => new ReferenceTrainerError('read_failed', `sampling from ${from} failed on ${d.file}:${task.line}: ${reason}`);
  for (let s = 0; s < d.tasks.length; s += engine.chunk) {
    const tasks = d.tasks.slice(s, s + engine.chunk);
    // the first request that fails for good stops the others: the evaluation cannot be complete
    const stop = new AbortController();
    engine.onFailed = (request, reason) => stop.abort(failure(tasks[request]!, reason));
    const out = await engine.sampler.sample(
      tasks.map((t) => ({ prompt: engine.prompts.get(t.question)!, n: o.n, params: params(t.question) })),
      stop.signal,
    );
    answered = outcomes.length + tasks.length;
    out.forEach((ps, i) => {
      const task = tasks[i]!;
      outcomes.push(
        ps.completions.map((c) => {
          if (c.finish === 'error') throw failure(task, c.error ?? 'unknown error');
          const r = mathReward(c.text ?? engine.text(c.tokens), task.answer);
          return { correct: r.reward > 0, tokens: c.tokens.length, truncated: c.finish === 'length', answered: r.extracted !== null };
        }),
      );
    });
    logger.progress?.({ dataset: d.name, index, datasets, done: outcomes.length, problems: d.tasks.length });
  }
  const score = scoreDataset(outcomes, o.n);
  const seconds = (performance.now() - t0) / 1000;
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  logger.info(`${d.name}: ${score.problems} problems x ${o.n}: mean acc ${pct(score.accuracy)}, pass@${o.n} ${pct(score.passAtN)} (${seconds.toFixed(1)} s)`);
  const ids = d.tasks.map((t) => t.id);
  return {
    name: d.name,
    file: d.file,
    preset: d.preset,
    ...score,
    lines: d.tasks.map((t) => t.line),
    ...(ids.every((x) => x !== undefined) ? { ids: ids as string[] } : {}),
    seconds,
  };
}

/** Read every dataset before anything else happens. */
async function loadDatasets(o: EvalOptions): Promise<LoadedDataset[]> {
  const names = datasetNames(o.datasets);
  const out: LoadedDataset[] = [];
  for (const [i, d] of o.datasets.entries()) {
    if (!existsSync(d.file)) throw new ReferenceTrainerError('missing_file', 'dataset not found', { file: d.file });
    if (statSync(d.file).isDirectory()) throw new ReferenceTrainerError('read_failed', 'a directory, not a JSON-lines file', { file: d.file });
    let tasks: Task[];
    try {
      tasks = await loadTasks(d.file, d.preset, o.limit ?? Infinity);
    } catch (err) {
      throw new ReferenceTrainerError('invalid_record', `${(err as Error).message} (read as preset ${d.preset})`, {}, { cause: err });
    }
    if (tasks.length === 0) throw new ReferenceTrainerError('invalid_record', 'no problems in the dataset', { file: d.file });
    out.push({ name: names[i]!, file: d.file, preset: d.preset, tasks });
  }
  return out;
}

function templateOf(name: 'plain' | 'chatml'): ApplyChatTemplate {
  return name === 'plain' ? plainChatTemplate : chatmlTemplate;
}

/** The local model: loaded once, prompts tokenized here (special tokens of the template parsed, as a server does). */
async function localEngine(o: EvalOptions, dir: string, questions: readonly string[], logger: EvalLogger): Promise<Engine> {
  if (!existsSync(join(dir, 'config.json'))) throw new ReferenceTrainerError('missing_file', 'model directory not found (no config.json there)', { file: dir });
  let backend: string;
  try {
    backend = await selectBackend({ backend: o.backend }, { info: logger.info });
  } catch (err) {
    throw new ReferenceTrainerError('invalid_options', (err as Error).message, { field: 'backend' }, { cause: err });
  }
  let model: Qwen3Model | undefined;
  let tokenizer: Tokenizer | undefined;
  try {
    model = loadModel(dir, { trainable: false });
    tokenizer = loadTokenizer(dir);
  } catch (err) {
    model?.dispose();
    throw new ReferenceTrainerError('read_failed', `cannot load the model: ${(err as Error).message}`, { file: dir }, { cause: err });
  }
  const m = model;
  const tok = tokenizer;
  const close = () => {
    m.dispose();
    tok.free();
  };
  try {
    const which = o.template ?? 'model';
    let apply: ApplyChatTemplate;
    let template: string = which;
    if (which === 'model') {
      const t = modelChatTemplate(dir, tok);
      apply = t.apply ?? plainChatTemplate;
      template = t.source === 'none' ? 'plain' : t.source;
    } else apply = templateOf(which);
    const builder = promptBuilder({}, apply);
    const prompts = new Map<string, SamplePrompt>();
    let longest = 0;
    for (const q of questions) {
      const tokens = tok.encode(builder.text(q));
      longest = Math.max(longest, tokens.length);
      prompts.set(q, { tokens });
    }
    const context = m.config.max_position_embeddings;
    const room = context - longest;
    if (room < 1) throw new ReferenceTrainerError('invalid_options', `the longest prompt has ${longest} tokens: no room left in the model's context of ${context} tokens`);
    if (o.maxTokens !== undefined && o.maxTokens > room) {
      throw new ReferenceTrainerError('invalid_options', `max tokens ${o.maxTokens} does not fit: the longest prompt has ${longest} tokens and the model's context is ${context} (at most ${room})`);
    }
    const sampler = policySampler(m, tok, { batchSize: o.batchSize });
    const eos = [...sampler.eosTokenIds];
    if (eos.length === 0) throw new ReferenceTrainerError('invalid_config', 'the model has no eos_token_id and its tokenizer no <|im_end|> or <|endoftext|>: completions could not end', { file: join(dir, 'config.json'), field: 'eos_token_id' });
    const eosSet = new Set(eos);
    return {
      policy: { kind: 'model', dir: resolve(dir), parameters: m.numParameters(), backend, eosTokenIds: eos, template },
      sampler,
      prompts,
      maxTokens: o.maxTokens ?? Math.min(DEFAULT_MAX_TOKENS, room),
      // about four decoding batches per call
      chunk: Math.max(1, Math.ceil((4 * o.batchSize) / o.n)),
      text: (tokens) => tok.decode(tokens.filter((id) => !eosSet.has(id))),
      close,
    };
  } catch (err) {
    close();
    throw err;
  }
}

/** The OpenAI base URL: `http://host:8000` means `http://host:8000/v1`. */
export function baseUrlOf(endpoint: string): string {
  const u = new URL(endpoint);
  const path = u.pathname.replace(/\/+$/, '');
  return `${u.origin}${path === '' ? '/v1' : path}`;
}

/** An OpenAI-compatible server: GET /models checks that it answers and names the model. */
async function endpointEngine(o: EvalOptions, endpoint: string, questions: readonly string[], logger: EvalLogger): Promise<Engine> {
  const base = baseUrlOf(endpoint);
  const listed = await listModels(base, o.apiKey);
  const name = o.modelName ?? listed[0]?.id;
  if (name === undefined) throw new ReferenceTrainerError('read_failed', `${base}/models lists no model: pass --model-name`);
  const served = listed.find((x) => x.id === name);
  if (o.modelName !== undefined && served === undefined) logger.warn?.(`${base}/models does not list ${name} (it lists ${listed.map((x) => x.id).join(', ') || 'nothing'})`);
  const api = o.chat ? 'chat' : 'completions';
  const template = o.chat ? 'server' : (o.template ?? 'plain');
  const builder: PromptBuilder = promptBuilder({}, o.chat ? chatmlTemplate : templateOf(template as 'plain' | 'chatml'));
  const prompts = new Map<string, SamplePrompt>();
  // bytes bound the tokens of a byte-level BPE tokenizer; the chat case is estimated from the ChatML rendering
  let longest = 0;
  const te = new TextEncoder();
  for (const q of questions) {
    prompts.set(q, o.chat ? { messages: builder.messages(q) } : { text: builder.text(q) });
    longest = Math.max(longest, te.encode(builder.text(q)).length + (o.chat ? 32 : 0));
  }
  let maxTokens = o.maxTokens ?? DEFAULT_MAX_TOKENS;
  const context = served?.maxModelLen;
  if (o.maxTokens === undefined && context !== undefined && context - longest < maxTokens) {
    maxTokens = context - longest;
    if (maxTokens < 1) throw new ReferenceTrainerError('invalid_options', `no room for a default max tokens: the server's context is ${context} tokens and the longest prompt may take up to ${longest}; set it (--max-tokens)`);
  }
  const sampler = httpSampler(
    { baseUrl: base, model: name, endpoint: api, concurrency: o.concurrency, ...(o.apiKey === undefined ? {} : { apiKey: o.apiKey }), ...(o.chat ? { extraBody: { chat_template_kwargs: { enable_thinking: false } } } : {}) },
    {
      onEvent: (e) => {
        if (e.type === 'retry') logger.warn?.(`request retried (${e.reason}); next try in ${(e.delayMs / 1000).toFixed(1)} s`);
        else if (e.type === 'failed') engine.onFailed?.(e.request, `${e.reason} (after ${e.attempts} attempt${e.attempts > 1 ? 's' : ''})`);
        else engine.onAnswered?.();
      },
    },
  );
  const engine: Engine = {
    policy: { kind: 'endpoint', url: base, model: name, api, template },
    sampler,
    prompts,
    maxTokens,
    // one call per dataset keeps `concurrency` requests in flight to the end; progress comes per response
    chunk: Infinity,
    text: () => '',
    close() {},
  };
  return engine;
}

/** GET {base}/models: the served ids (and `max_model_len` where the server reports it, as vLLM does). */
async function listModels(base: string, apiKey: string | undefined): Promise<{ id: string; maxModelLen?: number }[]> {
  const url = `${base}/models`;
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, { headers: { accept: 'application/json', ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }) }, signal: AbortSignal.timeout(30_000) });
    text = await res.text();
  } catch (err) {
    const e = err as { message?: string; cause?: { code?: string; message?: string } };
    const why = e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
    throw new ReferenceTrainerError('read_failed', `cannot reach ${url}: ${why}`, {}, { cause: err });
  }
  if (!res.ok) throw new ReferenceTrainerError('read_failed', `${url} answered HTTP ${res.status}: ${text.replace(/\s+/g, ' ').trim().slice(0, 200)}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ReferenceTrainerError('read_failed', `${url} did not answer JSON: is ${base} an OpenAI-compatible base URL (…/v1)?`, {}, { cause: err });
  }
  const data = (json as { data?: unknown }).data;
  if (!Array.isArray(data)) throw new ReferenceTrainerError('read_failed', `${url} did not answer a model list ({"data": [...]})`);
  return data.flatMap((m: unknown) => {
    const x = m as { id?: unknown; max_model_len?: unknown };
    if (typeof x.id !== 'string') return [];
    return [typeof x.max_model_len === 'number' ? { id: x.id, maxModelLen: x.max_model_len } : { id: x.id }];
  });
}

function describePolicy(p: EvalPolicy): string {
  return p.kind === 'model'
    ? `model ${p.dir} (${p.parameters.toLocaleString('en')} parameters, backend ${p.backend}, ${p.template} template)`
    : `${p.model} at ${p.url} (/${p.api === 'chat' ? 'chat/completions' : 'completions'}, ${p.template === 'server' ? "the server's chat template" : `${p.template} template`})`;
}
