/**
 * The dataset presets: one set of names for the field layouts of the usual math datasets, the
 * benchmark names as aliases, and the guess of a file's preset from its path. `rlvr train`'s
 * `data.format` and `rlvr eval`'s `--preset` read the same names.
 */
import { z } from 'zod';
import type { FieldMapping } from './datasets.js';

/** Field layouts of the usual math datasets, by their one canonical name. */
export const DATASET_PRESETS = {
  deepmath: { question: 'question', answer: 'final_answer', answerFormat: 'value' },
  math500: { question: 'problem', answer: 'answer', answerFormat: 'value', id: 'unique_id', solution: 'solution' },
  aime: { question: 'problem', answer: 'answer', answerFormat: 'value', id: 'id' },
  amc: { question: 'problem', answer: 'answer', answerFormat: 'value', id: 'id' },
  college_math: { question: 'problem', answer: 'answer', answerFormat: 'value', id: 'id' },
  minerva_math: { question: 'problem', answer: 'solution', answerFormat: 'last_boxed', id: 'idx', solution: 'solution' },
  olympiadbench: { question: 'question', answer: 'final_answer', answerFormat: 'list', id: 'id' },
  /** the answer field is the worked solution, ending in `#### answer` */
  gsm8k: { question: 'question', answer: 'answer', answerFormat: 'after_hashes', solution: 'answer' },
  /** rows of `rlvr-rollout synth`, and of the synthetic tasks' `toRow` (with a `chain` field where the row has one) */
  synthetic: { question: 'question', answer: 'answer', answerFormat: 'value', solution: 'solution', chain: 'chain', scaffold: 'scaffold' },
} as const satisfies Record<string, FieldMapping>;
export type DatasetPreset = keyof typeof DATASET_PRESETS;

/**
 * Other names a preset answers to: the benchmark names of the paper's evaluation (what `rlvr
 * eval` called its presets before they were one set). A table names a dataset by its alias.
 */
export const PRESET_ALIASES = {
  aime24: 'aime',
  amc23: 'amc',
  minerva: 'minerva_math',
  college: 'college_math',
  olympiad: 'olympiadbench',
} as const satisfies Record<string, DatasetPreset>;

/** A preset's name or one of its aliases. */
export type PresetName = DatasetPreset | keyof typeof PRESET_ALIASES;

/** The preset a name or alias stands for; undefined when it names none. */
export function resolvePreset(name: string): DatasetPreset | undefined {
  if (Object.hasOwn(DATASET_PRESETS, name)) return name as DatasetPreset;
  if (Object.hasOwn(PRESET_ALIASES, name)) return PRESET_ALIASES[name as keyof typeof PRESET_ALIASES];
  return undefined;
}

/** The valid names, for an error message: `deepmath, math500, aime (or aime24), ...`. */
export function presetNamesText(): string {
  return (Object.keys(DATASET_PRESETS) as DatasetPreset[])
    .map((p) => {
      const aliases = Object.entries(PRESET_ALIASES)
        .filter(([, to]) => to === p)
        .map(([a]) => a);
      return aliases.length === 0 ? p : `${p} (or ${aliases.join(', ')})`;
    })
    .join(', ');
}

const NAMES = [...Object.keys(DATASET_PRESETS), ...Object.keys(PRESET_ALIASES)] as [PresetName, ...PresetName[]];

/** The message of an unknown preset name: it lists the valid ones. */
export function unknownPresetMessage(name: unknown): string {
  return `unknown dataset preset ${JSON.stringify(name)}: the presets are ${presetNamesText()}`;
}

/** A preset name or alias (an enum of both in JSON Schema), read as the preset; anything else fails listing the valid names. */
export const PresetNameSchema = z
  .enum(NAMES, { error: (issue) => unknownPresetMessage(issue.input) })
  .transform((name): DatasetPreset => resolvePreset(name)!);

/** File-name patterns of the usual benchmark files, most specific first. */
const FILE_PATTERNS: readonly [RegExp, DatasetPreset][] = [
  [/math[-_ ]?500|math[-_]oai/i, 'math500'],
  [/aime/i, 'aime'],
  [/amc/i, 'amc'],
  [/minerva/i, 'minerva_math'],
  [/college/i, 'college_math'],
  [/olympiad/i, 'olympiadbench'],
  [/gsm8k/i, 'gsm8k'],
  [/deepmath/i, 'deepmath'],
  [/synth|long[-_]?chain/i, 'synthetic'],
];

/**
 * Guess a dataset's preset from its path (`AIME24/test.jsonl` -> aime, `minerva-math.jsonl` ->
 * minerva_math): the file name first, then the directory holding it (no further up: a home
 * directory's name says nothing about the data). Undefined when nothing matches.
 */
export function guessPreset(file: string): DatasetPreset | undefined {
  const parts = file.split(/[\\/]+/).filter((p) => p !== '');
  for (const part of parts.slice(-2).reverse()) {
    for (const [re, preset] of FILE_PATTERNS) if (re.test(part)) return preset;
  }
  return undefined;
}

/** The table name of a preset: its benchmark alias (aime24) where there is one, else the preset. */
export function presetLabel(preset: DatasetPreset): string {
  const hit = Object.entries(PRESET_ALIASES).find(([, p]) => p === preset);
  return hit === undefined ? preset : hit[0];
}
