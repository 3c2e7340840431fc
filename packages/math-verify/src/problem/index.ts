/**
 * What a problem statement decides about its answer, read once per distinct statement: the units asked, the
 * rounding asked, the form asked and the options of a multiple-choice question. The grader consults it only
 * when the caller passes `problem`; without one, nothing here runs.
 */
import type { VerifyOptions } from '../options.js';
import { problemRounding } from '../rounding.js';
import { questionChoices } from './choices.js';
import { askedForm } from './form.js';
import { askedUnits } from './units.js';

import type { ProblemFacts } from './judge.js';

export { judgeWithProblem } from './judge.js';
export type { ProblemFacts } from './judge.js';
export { unitAfter } from './units.js';

/** The question of a chat-templated prompt: its last user turn (ChatML, Llama 3, Gemma); other text as it is. */
export function questionOf(prompt: string): string {
  const turns: [string, string][] = [
    ['<|im_start|>user', '<|im_end|>'],
    ['<|start_header_id|>user<|end_header_id|>', '<|eot_id|>'],
    ['<start_of_turn>user', '<end_of_turn>'],
  ];
  for (const [open, close] of turns) {
    const at = prompt.lastIndexOf(open);
    if (at < 0) continue;
    const body = prompt.slice(at + open.length);
    const end = body.indexOf(close);
    return (end < 0 ? body : body.slice(0, end)).trim();
  }
  return prompt;
}

/** Long statements are read from their end, where the question is; a bound on the regular expressions' work. */
const MAX_PROBLEM_CHARS = 20_000;
const CACHE_SIZE = 2048;
const cache = new Map<string, ProblemFacts>();

/** The facts of `problem`, cached by its text (a training step grades G completions of each problem). */
export function problemFacts(problem: string): ProblemFacts {
  const hit = cache.get(problem);
  if (hit !== undefined) return hit;
  const q = questionOf(problem).slice(-MAX_PROBLEM_CHARS);
  const facts: ProblemFacts = {
    units: askedUnits(q),
    roundTo: problemRounding(q),
    form: askedForm(q),
    choices: questionChoices(q),
    derived: new WeakMap(),
  };
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  cache.set(problem, facts);
  return facts;
}

/**
 * The options a problem implies: its rounding when `roundTo` is unset, and percent as written (`25\%` is 25, not
 * 0.25) when it asks "what percent" and `percent` is the default `either`.
 */
export function problemOptions(facts: ProblemFacts, opts: VerifyOptions): VerifyOptions {
  let out = facts.derived.get(opts);
  if (out === undefined) {
    out = opts;
    if (opts.roundTo === null && facts.roundTo !== null) out = { ...out, roundTo: facts.roundTo };
    if (opts.percent === 'either' && facts.units.get('percent') === 'percent') out = { ...out, percent: 'strip' };
    facts.derived.set(opts, out);
  }
  return out;
}
