import { z } from 'zod';
import { findBoxes, formatZodIssues, parseConfig, readJsonl } from '@rlvr/core';
import { ChainSchema } from './chain.js';
import type { Chain } from './chain.js';
import { TaskError } from './errors.js';
import { DATASET_PRESETS, PresetNameSchema, presetNamesText, unknownPresetMessage } from './presets.js';
import type { PresetName } from './presets.js';
import { ScaffoldSchema } from './scaffold.js';
import type { Scaffold } from './scaffold.js';

/** A verifiable task: the question a prompt is built from and the gold answer the reward compares with. */
export interface Task {
  question: string;
  /** The gold answer as text (numbers stringified, lists joined with ", "). */
  answer: string;
  /** 1-based line of the row in its file. */
  line: number;
  /** The row's id field, when the mapping names one. */
  id?: string;
  /** The worked (reference) solution, when the mapping names a solution field and the row has it. */
  solution?: string;
  /** The exact chain of a synthetic problem, when the mapping names a chain field and the row has it. */
  chain?: Chain;
  /** The answer-hidden scaffold (sub-questions, hidden sub-answers), when the mapping names a scaffold field and the row has it. */
  scaffold?: Scaffold;
}

/**
 * How to read a task from a JSON row.
 * `answerFormat`:
 * - `value`: the field is a string, or a finite number stringified the JavaScript way
 *   (AMC's `27.0` is read by JSON as 27 and becomes "27");
 * - `last_boxed`: the field is a worked solution; the gold is its last balanced `\boxed{}` (Minerva-MATH);
 * - `after_hashes`: the gold is the text after the last `####`, trimmed, with thousands
 *   separators removed from a plain number ("14,400" -> "14400") (GSM8K);
 * - `list`: a non-empty list of strings or numbers, joined with ", " (OlympiadBench).
 *   Unlike the reference code, which grades the Python repr "['108']", the elements
 *   themselves are kept.
 */
export const FieldMappingSchema = z
  .object({
    /** field holding the question (dotted path for nested fields) */
    question: z.string().min(1),
    /** field holding the gold answer */
    answer: z.string().min(1),
    answerFormat: z.enum(['value', 'last_boxed', 'after_hashes', 'list']).default('value'),
    /** optional field holding an id (string or number) */
    id: z.string().min(1).optional(),
    /** optional field holding a worked solution (text), read where a row has it: a reference for methods that use one */
    solution: z.string().min(1).optional(),
    /** optional field holding the problem's exact chain (`ChainSchema`), read where a row has it: what the first-error labeller checks against */
    chain: z.string().min(1).optional(),
    /** optional field holding an answer-hidden scaffold (`ScaffoldSchema`), read where a row has it */
    scaffold: z.string().min(1).optional(),
  })
  .strict();
export type FieldMapping = z.output<typeof FieldMappingSchema>;
export type FieldMappingInput = z.input<typeof FieldMappingSchema>;

/**
 * A dataset's layout as a config reads it (`rlvr train`'s `data.format`): a preset name or alias
 * (read as the preset), or a field mapping. A bad one fails with one message: an unknown name lists
 * the presets, a bad mapping says which of its fields is wrong.
 */
export const DatasetFormatSchema = z.union([PresetNameSchema, FieldMappingSchema], {
  error: (issue) => {
    const input = issue.input;
    if (typeof input === 'string') return unknownPresetMessage(input);
    if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
      const r = FieldMappingSchema.safeParse(input);
      if (!r.success) return `not a field mapping: ${formatZodIssues(r.error.issues, input, FieldMappingSchema)}`;
    }
    return `must be a preset name (${presetNamesText()}) or a field mapping {"question": ..., "answer": ...}`;
  },
});

/** The mapping a preset name or a custom mapping stands for; an unknown preset or a bad mapping throws `CoreError('invalid_config')` listing what is allowed. */
export function resolveMapping(mapping: PresetName | FieldMappingInput): FieldMapping {
  if (typeof mapping === 'string') {
    return DATASET_PRESETS[parseConfig(PresetNameSchema, mapping, 'dataset preset')];
  }
  return parseConfig(FieldMappingSchema, mapping, 'dataset field mapping');
}

/** Read one task from a parsed row; a missing or mistyped field throws naming file, line and field. */
export function taskFromRow(row: unknown, mapping: FieldMapping, where: { file?: string; line: number }): Task {
  const at = (field: string) => ({ ...where, field });
  if (row === null || typeof row !== 'object' || Array.isArray(row)) {
    throw new TaskError('invalid_row', `expected a JSON object, got ${describe(row)}`, { ...where });
  }
  const question = fieldAt(row, mapping.question);
  if (typeof question !== 'string' || question.trim() === '') {
    throw new TaskError('invalid_row', `expected a non-empty string question, got ${describe(question)}`, at(mapping.question));
  }
  const task: Task = { question, answer: readAnswer(fieldAt(row, mapping.answer), mapping, at(mapping.answer)), line: where.line };
  if (mapping.id !== undefined) {
    const id = fieldAt(row, mapping.id);
    if (typeof id !== 'string' && !(typeof id === 'number' && Number.isFinite(id))) {
      throw new TaskError('invalid_row', `expected a string or number id, got ${describe(id)}`, at(mapping.id));
    }
    task.id = String(id);
  }
  if (mapping.solution !== undefined) {
    // a row without the field has no solution; one with the field must hold text
    const solution = fieldAt(row, mapping.solution);
    if (solution !== undefined && solution !== null) {
      if (typeof solution !== 'string' || solution.trim() === '')
        throw new TaskError('invalid_row', `expected a non-empty string solution, got ${describe(solution)}`, at(mapping.solution));
      task.solution = solution;
    }
  }
  if (mapping.chain !== undefined) {
    const chain = fieldAt(row, mapping.chain);
    if (chain !== undefined && chain !== null) task.chain = parsed(ChainSchema, chain, at(mapping.chain));
  }
  if (mapping.scaffold !== undefined) {
    const scaffold = fieldAt(row, mapping.scaffold);
    if (scaffold !== undefined && scaffold !== null) task.scaffold = parsed(ScaffoldSchema, scaffold, at(mapping.scaffold));
  }
  if (task.chain !== undefined) {
    const last = task.chain.steps.at(-1)!.result;
    if (String(last) !== task.answer.trim())
      throw new TaskError('invalid_row', `the chain ends at ${last} but the answer is ${JSON.stringify(task.answer)}`, at(mapping.chain!));
    if (task.scaffold !== undefined && task.scaffold.subAnswers.length !== task.chain.steps.length)
      throw new TaskError(
        'invalid_row',
        `the scaffold has ${task.scaffold.subAnswers.length} sub-answers but the chain has ${task.chain.steps.length} steps`,
        at(mapping.scaffold!),
      );
  }
  return task;
}

/** A field read through its schema; a bad value throws naming the file, line and the field's own path. */
function parsed<S extends z.ZodType>(schema: S, value: unknown, loc: { file?: string; line: number; field: string }): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = [loc.field, ...issue.path.map(String)].join('.');
  throw new TaskError(
    'invalid_row',
    formatZodIssues([{ ...issue, path: [] }]).replace(/^\(root\): /, ''),
    { ...loc, field },
    { cause: r.error },
  );
}

/**
 * Stream the tasks of a JSONL file (one row in memory at a time). `mapping` is a
 * preset name (`"math500"`) or a custom `FieldMapping`. The first bad row throws
 * `TaskError('invalid_row')` naming the file, its line and the field.
 */
export async function* readTasks(file: string, mapping: PresetName | FieldMappingInput): AsyncGenerator<Task> {
  const m = resolveMapping(mapping);
  for await (const { line, value } of readJsonl(file)) yield taskFromRow(value, m, { file, line });
}

/** All tasks of a file (or the first `limit`). */
export async function loadTasks(file: string, mapping: PresetName | FieldMappingInput, limit = Infinity): Promise<Task[]> {
  const out: Task[] = [];
  if (limit <= 0) return out;
  for await (const t of readTasks(file, mapping)) {
    out.push(t);
    if (out.length >= limit) break;
  }
  return out;
}

function readAnswer(v: unknown, m: FieldMapping, loc: { file?: string; line: number; field: string }): string {
  switch (m.answerFormat) {
    case 'value':
      return scalar(v, loc);
    case 'list': {
      if (!Array.isArray(v) || v.length === 0)
        throw new TaskError('invalid_row', `expected a non-empty list of answers, got ${describe(v)}`, loc);
      return v.map((x, i) => scalar(x, { ...loc, field: `${loc.field}.${i}` })).join(', ');
    }
    case 'last_boxed': {
      if (typeof v !== 'string') throw new TaskError('invalid_row', `expected a solution string, got ${describe(v)}`, loc);
      const boxed = lastAnswer(v);
      if (boxed === null) throw new TaskError('invalid_row', 'the solution has no balanced \\boxed{...} to take the gold answer from', loc);
      return boxed;
    }
    case 'after_hashes': {
      if (typeof v !== 'string')
        throw new TaskError('invalid_row', `expected a solution string with "#### answer", got ${describe(v)}`, loc);
      const k = v.lastIndexOf('####');
      const answer = k < 0 ? '' : v.slice(k + 4).trim();
      if (answer === '') throw new TaskError('invalid_row', 'expected "#### answer" at the end of the solution', loc);
      return /^-?\d{1,3}(,\d{3})+(\.\d+)?$/.test(answer) ? answer.replaceAll(',', '') : answer;
    }
  }
}

/** The content of the last balanced box of a worked solution (core's box finder, as the grader reads boxes). */
function lastAnswer(text: string): string | null {
  const box = findBoxes(text).at(-1);
  return box === undefined ? null : text.slice(box.contentStart, box.contentEnd);
}

function scalar(v: unknown, loc: { file?: string; line: number; field: string }): string {
  if (typeof v === 'string' && v.trim() !== '') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  throw new TaskError('invalid_row', `expected a non-empty string or a finite number, got ${describe(v)}`, loc);
}

function fieldAt(row: object, path: string): unknown {
  let v: unknown = row;
  for (const key of path.split('.')) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing (field missing)';
  const s = JSON.stringify(v);
  return s.length > 60 ? s.slice(0, 57) + '...' : s;
}
