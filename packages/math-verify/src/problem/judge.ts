/**
 * The comparison of a gold and an answer under what their problem asks (see ./index.ts): a letter against the
 * text of its option and the reverse, then the units and (with `strictForm`) the form asked. The grader's own
 * parse and compare are passed in, so this file adds rules without a second copy of them.
 */
import type { Node } from '../ast.js';
import type { VerifyOptions } from '../options.js';
import { answerLetter } from './choices.js';
import { type AskedForm, formConflict } from './form.js';
import { unitConflict } from './units.js';

/** What `problemFacts` (index.ts) reads from a statement; defined here, where it is judged, so the two import in one direction. */
export interface ProblemFacts {
  /** The unit asked, by kind (`length` -> `foot`). */
  units: Map<string, string>;
  /** Decimal places asked ("to the nearest tenth": 1), or null. */
  roundTo: number | null;
  form: AskedForm | null;
  /** The options of a multiple-choice question, by letter; null when it lists none. */
  choices: Map<string, string> | null;
  /** `opts` with what the problem implies (its rounding, percent as written), by resolved options object. */
  derived: WeakMap<VerifyOptions, VerifyOptions>;
}

/** The parts of a parsed answer these rules read. */
export interface Judged {
  text: string;
  node: Node | null;
  units: string[];
}

export interface Verdict {
  equal: boolean;
  reason: string;
  gold: string | null;
  pred: string | null;
}

/**
 * `compare(g, p)` under `facts`; `extraUnits` are units written after the answer in its completion (`\boxed{200}
 * inches`), which the parsed answer does not hold.
 */
export function judgeWithProblem<P extends Judged>(
  facts: ProblemFacts,
  g: P,
  p: P,
  opts: VerifyOptions,
  compare: (g: P, p: P, opts: VerifyOptions) => Verdict,
  parse: (raw: string, opts: VerifyOptions) => P,
  extraUnits: readonly string[] = [],
): Verdict {
  let r: Verdict | null = null;
  if (facts.choices !== null) {
    const gl = answerLetter(g.text, facts.choices);
    const pl = answerLetter(p.text, facts.choices);
    if (gl !== null && pl !== null) return { equal: gl === pl, reason: gl === pl ? 'same_choice' : 'different_choice', gold: gl, pred: pl };
    // One side a letter, the other a value: the letter's option text stands for it.
    if (gl !== null) {
      const c = compare(parse(facts.choices.get(gl) as string, opts), p, opts);
      r = { ...c, reason: `choice (${gl}) by its text: ${c.reason}`, gold: `(${gl}) ${c.gold}` };
    } else if (pl !== null) {
      const c = compare(g, parse(facts.choices.get(pl) as string, opts), opts);
      r = { ...c, reason: `choice (${pl}) by its text: ${c.reason}`, pred: `(${pl}) ${c.pred}` };
    }
  }
  r ??= compare(g, p, opts);
  if (!r.equal) return r;
  // An answer with the gold's own text has the gold's units; only a unit written after it can differ.
  const units = r.reason === 'same_text' ? extraUnits : extraUnits.length === 0 ? p.units : [...p.units, ...extraUnits];
  const unit = unitConflict(facts.units, g.units, units);
  if (unit !== null) return { ...r, equal: false, reason: unit };
  if (opts.strictForm && facts.form !== null && p.node !== null) {
    const form = formConflict(facts.form, p.node);
    if (form !== null) return { ...r, equal: false, reason: form };
  }
  return r;
}
