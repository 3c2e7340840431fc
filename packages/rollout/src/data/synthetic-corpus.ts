/**
 * The synthetic task as supervised rows (prompt and worked-solution token ids) with its own
 * pruned vocabulary: the corpus a tiny policy is warmed up on before RL (`rlvr pretrain`), in the
 * row shape of `@rlvr/trainer`'s `packSft`.
 */
import { prunedTokenizer, prunedVocab } from '@rlvr/policy/tokenizer';
import type { PrunedVocab, Tokenizer } from '@rlvr/policy/tokenizer';
import { promptBuilder } from './prompt.js';
import type { PromptBuilder } from './prompt.js';
import { syntheticGenerator } from '@rlvr/tasks';
import type { ChainTask, ChainTaskGenerator, SyntheticOptions } from '@rlvr/tasks';

/** The end-of-text token that closes every completion (so that greedy decoding stops). */
const EOS_TOKEN = '<|endoftext|>';

/** A synthetic problem tokenized for supervised training and for evaluation. */
export interface SftTask {
  question: string;
  /** the gold final answer */
  answer: string;
  /** [P] token ids of the rendered prompt */
  prompt: number[];
  /** [C] token ids of the worked solution, then EOS */
  completion: number[];
}

/**
 * The warm-up corpus: training problems from task stream `seed`, minus any whose question is one
 * of the held-out ones; prompts rendered with `promptBuilder()` (plain chat template, the boxed
 * instruction); completions = worked solution + EOS.
 */
export class SyntheticCorpus {
  readonly prompts: PromptBuilder = promptBuilder();
  readonly train: ChainTaskGenerator;
  readonly heldOut: ChainTask[];
  readonly vocab: PrunedVocab;
  readonly tokenizer: Tokenizer;
  readonly eosId: number;
  readonly #heldOutQuestions: Set<string>;
  #cursor = 0;

  /**
   * @param train the training problems: the short task's options, or any family's generator
   *   (`taskGenerator('long-chain')` of `@rlvr/tasks`); `heldOut.options` likewise
   * @param vocabProblems training problems whose texts (with every held-out problem) define the
   *   pruned vocabulary: cl100k_base restricted to the tokens they use (+ bytes and merge parts).
   */
  constructor(
    readonly seed: number,
    train: SyntheticOptions | ChainTaskGenerator,
    heldOut: { seed: number; problems: number; options: SyntheticOptions | ChainTaskGenerator },
    vocabProblems: number,
  ) {
    this.train = generatorOf(train);
    const evalGen = generatorOf(heldOut.options);
    this.heldOut = Array.from({ length: heldOut.problems }, (_, i) => evalGen.task(heldOut.seed, i));
    this.#heldOutQuestions = new Set(this.heldOut.map((t) => t.question));
    const texts: string[] = [];
    for (const t of [...this.heldOut, ...Array.from({ length: vocabProblems }, (_, i) => this.train.task(seed, i))]) {
      texts.push(this.prompts.text(t.question), t.solution);
    }
    this.vocab = prunedVocab('cl100k_base', texts, [EOS_TOKEN]);
    this.tokenizer = prunedTokenizer(this.vocab);
    this.eosId = this.vocab.special[EOS_TOKEN]!;
  }

  /** Tokenize one task. */
  encode(task: Pick<ChainTask, 'question' | 'answer' | 'solution'>): SftTask {
    return {
      question: task.question,
      answer: task.answer,
      prompt: this.tokenizer.encode(this.prompts.text(task.question), { allowSpecial: false }),
      completion: [...this.tokenizer.encode(task.solution, { allowSpecial: false }), this.eosId],
    };
  }

  /** The next `n` training problems of the stream (held-out questions skipped). Deterministic in call order. */
  nextBatch(n: number): SftTask[] {
    const out: SftTask[] = [];
    while (out.length < n) {
      const task = this.train.task(this.seed, this.#cursor++);
      if (!this.#heldOutQuestions.has(task.question)) out.push(this.encode(task));
    }
    return out;
  }

  /** Training problems drawn so far (including skipped held-out duplicates). */
  get cursor(): number {
    return this.#cursor;
  }
}

function generatorOf(g: SyntheticOptions | ChainTaskGenerator): ChainTaskGenerator {
  return 'task' in g && typeof g.task === 'function' ? g : syntheticGenerator(g as SyntheticOptions);
}
