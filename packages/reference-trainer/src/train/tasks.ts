import type { Tokenizer } from '@rlvr/policy';
import { promptBuilder, syntheticGenerator } from '@rlvr/rollout';
import type { SyntheticOptions, SyntheticTask } from '@rlvr/rollout';

/** A problem ready to sample: its question, gold answer and prompt token ids. */
export interface PromptTask {
  question: string;
  answer: string;
  /** [P] token ids of the rendered prompt */
  prompt: number[];
}

/** The held-out problems: `count` tasks of stream `seed` (index 0 ..), the ones `rlvr pretrain` held out with the same settings. */
export function heldOutTasks(seed: number, count: number, options: SyntheticOptions): SyntheticTask[] {
  return syntheticGenerator(options).tasks(seed, count, 0);
}

/**
 * The training problems: task stream `seed` in index order, minus any whose question is
 * held out. Deterministic: the same seed gives the same problems in the same order; `cursor`
 * (the next stream index) is what a checkpoint stores to resume the order exactly.
 */
export class TaskStream {
  readonly #generator;
  readonly #skip: ReadonlySet<string>;
  cursor = 0;

  constructor(
    readonly seed: number,
    options: SyntheticOptions,
    heldOut: readonly SyntheticTask[],
  ) {
    this.#generator = syntheticGenerator(options);
    this.#skip = new Set(heldOut.map((t) => t.question));
  }

  /** The next `n` problems. */
  next(n: number): SyntheticTask[] {
    const out: SyntheticTask[] = [];
    while (out.length < n) {
      const task = this.#generator.task(this.seed, this.cursor++);
      if (!this.#skip.has(task.question)) out.push(task);
    }
    return out;
  }
}

/** Render and tokenize prompts the way the warm-up was trained (`promptBuilder()`: plain chat template, boxed instruction). */
export function toPromptTasks(tasks: readonly SyntheticTask[], tokenizer: Tokenizer): PromptTask[] {
  const builder = promptBuilder();
  return tasks.map((t) => ({ question: t.question, answer: t.answer, prompt: tokenizer.encode(builder.text(t.question), { allowSpecial: false }) }));
}
