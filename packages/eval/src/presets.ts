/**
 * The benchmark names of `rlvr eval --preset` and the `@rlvr/rollout` field layouts they read
 * with, and the guess of a file's preset from its path.
 */
import { DATASET_PRESETS } from '@rlvr/rollout';
import type { DatasetPreset } from '@rlvr/rollout';

/**
 * The six benchmarks of the paper's evaluation (and the synthetic task) by their usual names. The
 * preset names of `DATASET_PRESETS` themselves (`aime`, `minerva_math`, `gsm8k`, ...) are accepted too.
 */
export const EVAL_PRESETS = {
  math500: 'math500',
  aime24: 'aime',
  amc23: 'amc',
  minerva: 'minerva_math',
  college: 'college_math',
  olympiad: 'olympiadbench',
  synthetic: 'synthetic',
} as const satisfies Record<string, DatasetPreset>;
export type EvalPresetName = keyof typeof EVAL_PRESETS;

/** The `DATASET_PRESETS` key a CLI preset name stands for; undefined when it names none. */
export function resolvePreset(name: string): DatasetPreset | undefined {
  if (Object.hasOwn(EVAL_PRESETS, name)) return EVAL_PRESETS[name as EvalPresetName];
  if (Object.hasOwn(DATASET_PRESETS, name)) return name as DatasetPreset;
  return undefined;
}

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
  [/synth/i, 'synthetic'],
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

/** The table name of a preset: the benchmark name (aime24) where there is one, else the preset. */
export function presetLabel(preset: DatasetPreset): string {
  const hit = Object.entries(EVAL_PRESETS).find(([, p]) => p === preset);
  return hit === undefined ? preset : hit[0];
}
