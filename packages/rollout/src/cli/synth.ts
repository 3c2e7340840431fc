import { AtomicWriter, intFlag, usageError, type Command } from '@rlvr/core';
import { RolloutError } from '../errors.js';
import { TASK_NAMES, TaskNameSchema, taskGenerator } from '@rlvr/tasks';
import { writeRows } from './write-rows.js';

/** The most tasks one `synth` run writes (about 1.5 GB of JSONL): a larger `--count` is refused before any work. */
export const MAX_SYNTH_COUNT = 10_000_000;

const USAGE = `usage: rlvr-rollout synth --count N [--task NAME] [--seed S] [--from I] [--options JSON] [--out FILE.jsonl]

  Writes N synthetic arithmetic tasks, indices I .. I+N-1 of stream S, as rows
  {"question", "answer", "solution"} (long-chain: and "chain", the exact chain the first-error
  labeller of @rlvr/tasks reads); --options is a JSON object of generator knobs (arith: minSteps,
  maxSteps, digits, operations, maxFactor; long-chain: minSteps, maxSteps, minDigits, maxDigits,
  operations, maxFactor, minValue, maxValue, spacedDigits). The same arguments give the same file.
  --task     ${TASK_NAMES.join(' | ')} (default arith: the embedded default's short problems)
  --count    1 .. ${MAX_SYNTH_COUNT.toLocaleString('en')} (required)
  --seed     the stream: an integer, or any string (default 0)
  --from     the first task index (default 0)
  --out      written whole or not at all (default: stdout)
`;

/** `rlvr-rollout synth`: seeded synthetic tasks as JSONL. */
export const synthCommand: Command = {
  summary: 'write seeded synthetic arithmetic tasks as JSONL',
  usage: USAGE,
  options: {
    count: { type: 'string' },
    task: { type: 'string', default: 'arith' },
    seed: { type: 'string', default: '0' },
    from: { type: 'string', default: '0' },
    options: { type: 'string', default: '{}' },
    out: { type: 'string', short: 'o' },
  },
  async run({ values, io, signal }) {
    const count = intFlag(values, 'count', { min: 1, max: MAX_SYNTH_COUNT });
    if (count === undefined) throw usageError('is required', 'count');
    const from = intFlag(values, 'from', { min: 0, max: Number.MAX_SAFE_INTEGER - MAX_SYNTH_COUNT })!;
    let knobs: unknown;
    try {
      knobs = JSON.parse(values.options as string);
    } catch (cause) {
      throw new RolloutError('invalid_row', `is not JSON: ${(cause as Error).message}`, { field: '--options' }, { cause });
    }
    const name = TaskNameSchema.safeParse(values.task);
    if (!name.success) throw usageError(`unknown task ${JSON.stringify(values.task)}: the tasks are ${TASK_NAMES.join(', ')}`, 'task');
    const gen = taskGenerator(name.data, knobs);
    const withChain = name.data !== 'arith'; // arith rows stay as they always were
    const seed = values.seed as string;
    // a numeric seed is the same stream as in the library (`task(7, i)`), not the string "7"
    const s = /^-?\d+$/.test(seed) ? Number(seed) : seed;
    const out = values.out as string | undefined;
    const writer = out === undefined ? undefined : await AtomicWriter.open(out);
    await writeRows(
      (function* () {
        for (let i = from; i < from + count; i++) {
          const t = gen.task(s, i);
          const row = { question: t.question, answer: t.answer, solution: t.solution };
          yield JSON.stringify(withChain ? { ...row, chain: t.chain } : row) + '\n';
        }
      })(),
      writer,
      io,
      signal,
    );
  },
};
