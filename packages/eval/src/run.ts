/**
 * `runEval`: the paper's evaluation protocol on any model directory or OpenAI-compatible server,
 * over one or more datasets. The sampling and grading are `evaluateProblems`; this file reads the
 * datasets, builds the engine, scores each dataset and averages them.
 */
import { existsSync, statSync } from 'node:fs';
import { Rng, plural } from '@rlvr/core';
import { loadTasks } from '@rlvr/rollout';
import type { DatasetPreset, FieldMapping, Task } from '@rlvr/rollout';
import { describePolicy, endpointEngine, localEngine } from './engines.js';
import type { EvalPolicy, Question } from './engines.js';
import { EvaluationError } from './errors.js';
import { evaluateProblems } from './evaluate.js';
import { datasetNames, parseEvalOptions } from './options.js';
import type { EvalOptions, EvalOptionsInput } from './options.js';
import { averageScores } from './score.js';
import { stepQualityLine } from './table.js';
import type { DatasetScore, EvalMetrics } from './score.js';
import type { StepQuality } from './step-quality.js';

/** Where progress goes: the CLI prints it; library code never does. */
export interface EvalLogger {
  info(message: string): void;
  warn?(message: string): void;
  /** after every chunk of problems (and once per response of a server) */
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
  /** wall seconds since this dataset started */
  seconds: number;
}

/** One dataset's result. */
export interface EvalDatasetResult extends DatasetScore {
  name: string;
  file: string;
  /** its layout: a preset name ... */
  preset?: DatasetPreset;
  /** ... or a field mapping */
  fields?: FieldMapping;
  /** [problems] 1-based line of each problem in its file */
  lines: number[];
  /** [problems] the rows' ids, when the layout names an id field */
  ids?: string[];
  /** the Step-Quality metrics, over the problems whose row has a chain (the synthetic tasks' files, preset `synthetic`) */
  stepQuality?: StepQuality;
  seconds: number;
}

/**
 * The options as run: the API key is never recorded; `maxTokens` and `template` resolved; the
 * server options (`chat`, `concurrency`, `stream`, `tokenIds`) only with an endpoint, `batchSize` and `backend` only with a model.
 */
export type EvalRunOptions = Omit<
  EvalOptions,
  'apiKey' | 'maxTokens' | 'template' | 'chat' | 'concurrency' | 'stream' | 'tokenIds' | 'batchSize' | 'backend'
> &
  Partial<Pick<EvalOptions, 'chat' | 'concurrency' | 'stream' | 'tokenIds' | 'batchSize' | 'backend'>> & {
    maxTokens: number;
    template: string;
  };

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
  preset?: DatasetPreset;
  fields?: FieldMapping;
  tasks: Task[];
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
 * missing file, a bad row or an over-long question names file, line and field), the model (every
 * prompt must fit its context) or the server's GET /models. A sample that fails (a server error
 * after retries) fails the whole evaluation, naming the problem's file and line.
 */
export async function runEval(input: EvalOptionsInput | EvalOptions, logger: EvalLogger = { info() {} }): Promise<EvalResult> {
  const o = parseEvalOptions(input);
  const started = new Date();
  const t0 = performance.now();
  const datasets = await loadDatasets(o);
  const questions = new Map<string, Question>();
  for (const d of datasets)
    for (const t of d.tasks)
      if (!questions.has(t.question)) questions.set(t.question, { text: t.question, location: { file: d.file, line: t.line } });
  const engine =
    o.model !== undefined
      ? await localEngine(o, o.model, [...questions.values()], logger)
      : await endpointEngine(o, o.endpoint!, [...questions.values()], logger);
  try {
    const { apiKey: _k, maxTokens: _m, template: _t, ...rest } = o;
    // only the options that applied: no server options for a local model and the other way round
    const { chat: _c, concurrency: _n, stream: _s, tokenIds: _i, ...local } = rest;
    const { batchSize: _b, backend: _d, workers: _w, ...remote } = rest;
    const options: EvalRunOptions = {
      ...(o.model !== undefined ? local : remote),
      maxTokens: engine.maxTokens,
      template: engine.policy.template,
    } as EvalRunOptions;
    logger.info(
      `${describePolicy(engine.policy)}; ${datasets.length} dataset(s), ${o.n} sample(s) per problem, temperature ${o.temperature}, top-p ${o.temperature === 0 ? 1 : o.topP}, top-k ${o.temperature === 0 || o.topK === 0 ? 'off' : o.topK}, max ${engine.maxTokens} tokens`,
    );
    const results: EvalDatasetResult[] = [];
    for (const [index, d] of datasets.entries()) {
      const d0 = performance.now();
      const progress = (done: number) =>
        logger.progress?.({
          dataset: d.name,
          index,
          datasets: datasets.length,
          done,
          problems: d.tasks.length,
          seconds: (performance.now() - d0) / 1000,
        });
      progress(0);
      let answered = 0;
      engine.onAnswered = () => progress(Math.min(++answered, d.tasks.length));
      const e = await evaluateProblems(
        engine.sampler,
        d.tasks.map((t) => ({
          prompt: engine.prompts.get(t.question)!,
          answer: t.answer,
          question: t.question,
          seed: problemSeed(o.seed, t.question),
          location: { file: d.file, line: t.line },
          ...(t.chain === undefined ? {} : { chain: t.chain }),
        })),
        {
          n: o.n,
          temperature: o.temperature,
          topP: o.topP,
          topK: o.topK,
          maxNewTokens: engine.maxTokens,
          chunk: engine.chunk,
          text: engine.text,
          source: engine.policy.kind === 'endpoint' ? engine.policy.url : engine.policy.dir,
          onProgress: (done) => {
            answered = done;
            progress(done);
          },
        },
      );
      const seconds = (performance.now() - d0) / 1000;
      const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
      logger.info(
        `${d.name}: ${plural(e.problems, 'problem')} x ${o.n}: mean acc ${pct(e.accuracy)}, pass@${o.n} ${pct(e.passAtN)} (${seconds.toFixed(1)} s, ${secondsPer(seconds, e.problems)} s/problem)`,
      );
      if (e.stepQuality !== undefined) logger.info(`${d.name}: ${stepQualityLine(e.stepQuality)}`);
      const ids = d.tasks.map((t) => t.id);
      results.push({
        name: d.name,
        file: d.file,
        ...(d.preset !== undefined ? { preset: d.preset } : { fields: d.fields! }),
        problems: e.problems,
        n: e.n,
        accuracy: e.accuracy,
        passAt1: e.passAt1,
        passAtN: e.passAtN,
        meanTokens: e.meanTokens,
        truncated: e.truncated,
        noAnswer: e.noAnswer,
        correct: e.correct,
        lines: d.tasks.map((t) => t.line),
        ...(ids.every((x) => x !== undefined) ? { ids: ids as string[] } : {}),
        ...(e.stepQuality === undefined ? {} : { stepQuality: e.stepQuality }),
        seconds,
      });
    }
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
    engine.onAnswered = undefined;
    engine.close();
  }
}

/** Seconds per problem as progress lines and the dataset's closing line print it: one rule for both, so they agree. */
export function secondsPer(seconds: number, problems: number): string {
  return problems > 0 ? (seconds / problems).toFixed(2) : '-';
}

/** The seed of a problem's samples: the run seed and the question, nothing else. */
export function problemSeed(seed: number, question: string): number {
  return new Rng(`rlvr-eval|${seed}|${question}`).uint32();
}

/** Read every dataset before anything else happens; over-long questions are refused here, before any tokenizing. */
async function loadDatasets(o: EvalOptions): Promise<LoadedDataset[]> {
  const names = datasetNames(o.datasets);
  const out: LoadedDataset[] = [];
  for (const [i, d] of o.datasets.entries()) {
    if (!existsSync(d.file)) throw new EvaluationError('missing_file', 'dataset not found', { file: d.file });
    if (statSync(d.file).isDirectory()) throw new EvaluationError('invalid_record', 'a directory, not a JSON-lines file', { file: d.file });
    const layout = d.preset ?? d.fields!;
    let tasks: Task[];
    try {
      tasks = await loadTasks(d.file, layout, o.limit ?? Infinity);
    } catch (err) {
      const how = d.preset !== undefined ? `preset ${d.preset}` : `fields ${JSON.stringify(d.fields)}`;
      throw new EvaluationError('invalid_record', `${(err as Error).message} (read as ${how})`, {}, { cause: err });
    }
    if (tasks.length === 0) throw new EvaluationError('invalid_record', 'no problems in the dataset', { file: d.file });
    const long = tasks.find((t) => t.question.length > o.maxQuestionChars);
    if (long !== undefined) {
      throw new EvaluationError(
        'invalid_record',
        `the question is ${long.question.length.toLocaleString('en')} characters, over the limit of ${o.maxQuestionChars.toLocaleString('en')} (--max-question-chars)`,
        { file: d.file, line: long.line, field: 'question' },
      );
    }
    out.push({ name: names[i]!, file: d.file, ...(d.preset !== undefined ? { preset: d.preset } : { fields: d.fields! }), tasks });
  }
  return out;
}
