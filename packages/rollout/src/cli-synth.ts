import { z } from 'zod';
import { parseConfig } from '@rlvr/core';
import { RolloutError } from './errors.js';
import { syntheticGenerator } from './synthetic.js';
import { emitLines, type CommandContext } from './cli-io.js';

export const SYNTH_USAGE = `usage: rlvr-rollout synth --count N [--seed S] [--from I] [--options JSON] [--out FILE.jsonl]

  Writes N synthetic arithmetic tasks, indices I .. I+N-1 of stream S, as rows
  {"question", "answer", "solution"}; --options is a JSON object of generator knobs
  (minSteps, maxSteps, digits, operations, maxFactor). The same arguments give the same file.
`;

const Args = z.object({
  count: z.coerce.number().int().min(0),
  seed: z.string(),
  from: z.coerce.number().int().min(0),
});

export async function runSynth({ values, io }: CommandContext): Promise<void> {
  const { count, seed, from } = parseConfig(Args, { count: values.count, seed: values.seed, from: values.from }, 'synth');
  let knobs: unknown;
  try {
    knobs = JSON.parse(values.options as string);
  } catch (cause) {
    throw new RolloutError('invalid_row', `--options is not JSON: ${(cause as Error).message}`, { field: 'options' }, { cause });
  }
  const gen = syntheticGenerator(knobs as object);
  // a numeric seed is the same stream as in the library (`task(7, i)`), not the string "7"
  const s = /^-?\d+$/.test(seed) ? Number(seed) : seed;
  const rows = (function* () {
    for (let i = from; i < from + count; i++) {
      const t = gen.task(s, i);
      yield JSON.stringify({ question: t.question, answer: t.answer, solution: t.solution }) + '\n';
    }
  })();
  await emitLines(rows, values.out as string | undefined, io);
}
