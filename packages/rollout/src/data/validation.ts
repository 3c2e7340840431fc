/**
 * The validation split of a run's training problems: what `rlvr compare --tune` scores its learning
 * rates on, so that the held-out set decides nothing before the comparison. A run with a validation
 * split evaluates on it and never trains on it; the held-out problems stay out of both.
 */
import { CoreError, Rng } from '@rlvr/core';

/** The split in words, as `rlvr compare --tune` records it. */
export const VALIDATION_DEFINITION = {
  synthetic:
    'the first problems of the training task\'s stream "validation/EVAL_SEED" (eval.seed) whose question is not held out; every tuning run skips their questions in its training stream, as it skips the held-out ones',
  file: 'a seeded draw (Rng "EVAL_SEED/validation", eval.seed) of the training file\'s problems left after the held-out split; tuning runs train on the rest',
} as const;

/**
 * A synthetic task's validation problems: the first `count` of its stream `validation/SEED` (a stream
 * no training run draws: training streams are numbered by the run seed) whose question is not held
 * out. The training stream of a run with this split skips their questions, as it skips the held-out ones.
 */
export function validationTasks<T extends { question: string }>(
  generator: { task(seed: string, index: number): T },
  count: number,
  seed: number,
  heldOut: readonly { question: string }[],
): T[] {
  const skip = new Set(heldOut.map((t) => t.question));
  const out: T[] = [];
  for (let i = 0; out.length < count; i++) {
    // a task whose every problem is held out would loop for ever: say so instead
    if (i >= 100 * count + 10_000)
      throw new CoreError(
        'invalid_config',
        `found ${out.length} of ${count} validation problems that are not held out in ${i} of the task's problems`,
        {
          field: 'validation.problems',
        },
      );
    const t = generator.task(`validation/${seed}`, i);
    if (!skip.has(t.question)) out.push(t);
  }
  return out;
}

/**
 * A data file's validation split: `count` of its training problems `train` (the file less the held-out
 * ones), drawn with the `Rng` of `SEED/validation`; the rest train. Order within each part is the file's.
 * Throws `CoreError('invalid_config')` when nothing would be left to train on.
 */
export function splitValidation<T>(train: readonly T[], count: number, seed: number): { validation: T[]; train: T[] } {
  if (count >= train.length)
    throw new CoreError(
      'invalid_config',
      `a validation split of ${count} problems leaves none of the ${train.length} training problems to train on: lower the validation problems`,
      { field: 'validation.problems' },
    );
  const picked = new Set(new Rng(`${seed}/validation`).shuffle(Array.from({ length: train.length }, (_, i) => i)).slice(0, count));
  return { validation: train.filter((_, i) => picked.has(i)), train: train.filter((_, i) => !picked.has(i)) };
}
