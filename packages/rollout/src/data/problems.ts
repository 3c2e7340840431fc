/**
 * The problems of a training run, in the order it trains on them: the synthetic task stream or a
 * file's problems epoch by epoch (`cursor` is what a checkpoint stores to resume the order), a
 * seeded held-out split, and prompts rendered, tokenized and checked to fit the policy's context.
 */
import { Rng, type ProblemAux } from '@rlvr/core';
import type { Tokenizer } from '@rlvr/policy/tokenizer';
import { RolloutError } from '../errors.js';
import type { PromptBuilder } from './prompt.js';
import { syntheticGenerator } from '@rlvr/tasks';
import type { ChainTask, ChainTaskGenerator, SyntheticOptions } from '@rlvr/tasks';

/** A problem ready to sample: its question, gold answer and prompt token ids. */
export interface PromptTask {
  question: string;
  answer: string;
  /** [P] token ids of the rendered prompt */
  prompt: number[];
  /** [S] token ids of the problem's reference solution, tokenised as a completion (plain text, no EOS); absent without one */
  reference?: number[];
  /** the problem's auxiliary data for the method (`Problem.aux`); absent without any */
  aux?: ProblemAux;
  /** where a data file's problem comes from */
  source?: { file: string; line: number };
}

/** A problem: what the prompt is built from and what the answer is graded against. */
export interface Problem {
  question: string;
  answer: string;
  /** a worked (reference) solution, when the task or the data has one */
  solution?: string;
  /** per-problem data for the method, never shown to the policy (a synthetic task's `chain`; a data file's `scaffold` and `chain` fields) */
  aux?: ProblemAux;
  /** where a problem of a data file comes from (for error messages) */
  source?: { file: string; line: number };
}

/** The training problems in a fixed order; `cursor` is what a checkpoint stores to resume it. */
export interface ProblemStream {
  next(n: number): Problem[];
  cursor: number;
}

/**
 * The training problems: task stream `seed` in index order, minus any whose question is
 * held out. Deterministic: the same seed gives the same problems in the same order; `cursor`
 * (the next stream index) is what a checkpoint stores to resume the order exactly.
 */
export class TaskStream implements ProblemStream {
  readonly #generator;
  readonly #skip: ReadonlySet<string>;
  cursor = 0;

  constructor(
    readonly seed: number,
    options: SyntheticOptions | ChainTaskGenerator,
    heldOut: readonly ChainTask[],
  ) {
    // the short task's options, or any family's generator (`taskGenerator('long-chain')`)
    this.#generator = 'task' in options && typeof options.task === 'function' ? options : syntheticGenerator(options as SyntheticOptions);
    this.#skip = new Set(heldOut.map((t) => t.question));
  }

  /** The next `n` problems, each with its chain as `aux.chain` too (a method builds scaffolds from it). */
  next(n: number): (ChainTask & { aux: ProblemAux })[] {
    const out: (ChainTask & { aux: ProblemAux })[] = [];
    while (out.length < n) {
      const task = this.#generator.task(this.seed, this.cursor++);
      if (!this.#skip.has(task.question)) out.push({ ...task, aux: { chain: task.chain } });
    }
    return out;
  }
}

/**
 * Problems of a file, epoch after epoch, each epoch in a new seeded order (a Fisher-Yates
 * shuffle with the `Rng` of `(seed, epoch)`): every problem once per epoch.
 */
export class FileStream implements ProblemStream {
  cursor = 0;
  #epoch = -1;
  #order: number[] = [];

  constructor(
    readonly problems: readonly Problem[],
    readonly seed: number,
  ) {
    if (problems.length === 0) throw new RangeError('FileStream: no problems to train on');
  }

  next(n: number): Problem[] {
    const out: Problem[] = [];
    const len = this.problems.length;
    while (out.length < n) {
      const epoch = Math.floor(this.cursor / len);
      if (epoch !== this.#epoch) {
        this.#order = new Rng(`${this.seed}/epoch/${epoch}`).shuffle(Array.from({ length: len }, (_, i) => i));
        this.#epoch = epoch;
      }
      out.push(this.problems[this.#order[this.cursor % len]!]!);
      this.cursor++;
    }
    return out;
  }
}

/** Hold out `count` problems of `all` (a seeded draw); the rest train. Order within each part is the file's. */
export function splitHeldOut<T>(all: readonly T[], count: number, seed: number): { heldOut: T[]; train: T[] } {
  const picked = new Set(
    new Rng(`${seed}/held-out`).shuffle(Array.from({ length: all.length }, (_, i) => i)).slice(0, Math.min(count, all.length)),
  );
  return { heldOut: all.filter((_, i) => picked.has(i)), train: all.filter((_, i) => !picked.has(i)) };
}

/**
 * Render (with the policy's chat template) and tokenize prompts. The template's markers
 * (`<|im_start|>`, ...) are parsed as the special tokens they are, as `rlvr eval` and
 * `rlvr-serve` do, so that a chat model sees the prompts it was tuned on. A problem's solution
 * becomes the task's `reference`, tokenised as plain text (as a completion is); its `aux` and `source` go along.
 */
export function toPromptTasks(tasks: readonly Problem[], tokenizer: Tokenizer, builder: PromptBuilder): PromptTask[] {
  return tasks.map((t) => {
    const task: PromptTask = { question: t.question, answer: t.answer, prompt: tokenizer.encode(builder.text(t.question)) };
    // the solution as a completion's text: no special tokens parsed
    if (t.solution !== undefined) task.reference = tokenizer.encode(t.solution, { allowSpecial: false });
    if (t.aux !== undefined) task.aux = t.aux;
    if (t.source !== undefined) task.source = t.source;
    return task;
  });
}

/**
 * A question longer than this many characters per token of the policy's context is refused
 * before it is tokenized: no tokenizer packs that many characters into a token of ordinary text,
 * and a 50 MB line must not reach the tokenizer at all.
 */
const MAX_CHARS_PER_CONTEXT_TOKEN = 32;

/**
 * `toPromptTasks`, refusing before any work a prompt that cannot be sampled: one whose tokens and
 * `maxNewTokens` do not fit the policy's `context`, or whose question is too long to tokenize
 * (over `MAX_CHARS_PER_CONTEXT_TOKEN` characters per context token). The error names the data
 * file and line (else the problem's index) and `field` (`rollout` or `eval`), whose
 * `maxNewTokens` counts.
 */
export function checkPrompts(
  problems: readonly Problem[],
  tokenizer: Tokenizer,
  builder: PromptBuilder,
  o: { context: number; maxNewTokens: number; field: string },
): PromptTask[] {
  const maxChars = MAX_CHARS_PER_CONTEXT_TOKEN * o.context;
  return problems.map((p, i) => {
    const where = p.source ?? { index: i };
    const what = p.source === undefined ? `${o.field === 'eval' ? 'held-out' : 'training'} problem ${i}` : 'question';
    if (p.question.length > maxChars) {
      throw new RolloutError(
        'invalid_row',
        `${what} is ${p.question.length.toLocaleString('en')} characters, too long for the policy's context of ${o.context} tokens (at most ${maxChars.toLocaleString('en')} characters)`,
        where,
      );
    }
    const [task] = toPromptTasks([p], tokenizer, builder);
    if (task!.prompt.length + o.maxNewTokens > o.context) {
      throw new RolloutError(
        'invalid_row',
        `${what}: its prompt is ${task!.prompt.length} tokens; with ${o.field}.maxNewTokens ${o.maxNewTokens} it exceeds the policy's context of ${o.context} tokens (max_position_embeddings)`,
        where,
      );
    }
    return task!;
  });
}
