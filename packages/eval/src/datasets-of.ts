import { existsSync } from 'node:fs';
import { guessPreset, presetNamesText, resolveMapping, resolvePreset } from '@rlvr/tasks';
import type { DatasetPreset, FieldMapping } from '@rlvr/tasks';
import { usageError } from '@rlvr/core';
import { EvaluationError } from './errors.js';
import type { EvalDatasetInput } from './options.js';

type Layout = { preset: DatasetPreset } | { fields: FieldMapping };

/**
 * One `--preset` value: a preset name, or a field mapping as JSON (`{"question": ..., "answer":
 * ...}`, what `rlvr train` reads in `data.format`), checked by `@rlvr/tasks`' `resolveMapping`.
 */
export function parseLayout(value: string): Layout {
  if (value.trimStart().startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(value);
    } catch (err) {
      throw usageError(`a field mapping must be a JSON object: ${(err as Error).message}`, 'preset');
    }
    try {
      return { fields: resolveMapping(json as FieldMapping) };
    } catch (err) {
      throw usageError((err as Error).message, 'preset');
    }
  }
  const preset = resolvePreset(value);
  if (preset === undefined)
    throw usageError(
      `unknown preset ${JSON.stringify(value)}: the presets are ${presetNamesText()}, or a field mapping {"question": ..., "answer": ...}`,
      'preset',
    );
  return { preset };
}

/** Pair each file with its layout: one --preset for all, one per file, or guessed from the file name. */
export function datasetsOf(files: readonly string[], presets: readonly string[]): EvalDatasetInput[] {
  if (presets.length > 1 && presets.length !== files.length)
    throw usageError(`${presets.length} --preset for ${files.length} --dataset: give one for all files or one per file`);
  const layouts = presets.map(parseLayout);
  return files.map((file, i) => {
    if (!existsSync(file)) throw new EvaluationError('missing_file', 'dataset not found', { file });
    if (layouts.length > 0) return { file, ...layouts[layouts.length === 1 ? 0 : i]! };
    const preset = guessPreset(file);
    if (preset === undefined)
      throw usageError(`cannot tell the layout of ${file} from its name: pass --preset (${presetNamesText()}, or a field mapping)`);
    return { file, preset };
  });
}
