/**
 * The Step-Quality evaluation (SCOPE-RL, issue 43) on problems with an exact chain (the synthetic
 * tasks): how much of a completion's work is useful, where a wrong completion first goes wrong,
 * and how many tokens a solved problem costs. Pure arithmetic on graded texts; the labels are
 * `@rlvr/tasks`' exact step labeller (`labelSteps`) and first-error labeller (`labelCompletion`).
 */
import { ERROR_KINDS, labelCompletion, labelSteps } from '@rlvr/tasks';
import type { Chain, LabelKind } from '@rlvr/tasks';

/** One graded completion of a problem. */
export interface StepQualitySample {
  text: string;
  /** graded correct (the evaluator's `mathReward`) */
  correct: boolean;
}

/** A problem with its chain, its n graded samples and their completion tokens together. */
export interface StepQualityProblem {
  chain: Chain;
  samples: readonly StepQualitySample[];
  /** completion tokens of all its samples together (EOS included where the sampler counts it) */
  tokens: number;
}

/** A per-problem quantity averaged over the problems where it is defined; `se` the standard error over them (SD / sqrt(k), null for k < 2). */
export interface ProblemMean {
  mean: number | null;
  se: number | null;
  /** the problems it is defined on */
  problems: number;
}

export interface StepQuality {
  problems: number;
  samples: number;
  /**
   * useful-step density: per completion, useful lines / step lines (a step line is a non-blank line
   * that is not the `\boxed{}` answer, filler included), averaged over the problem's completions
   * that have a step line, then over problems
   */
  usefulDensity: ProblemMean;
  /** completions without a single step line (not in `usefulDensity`) */
  noSteps: number;
  /** completions graded wrong */
  wrong: number;
  /** error localisation: per problem, the fraction of its wrong completions whose first error the labeller finds (any kind but `unlabelled`, or `correct` where the grader disagrees) */
  localised: ProblemMean;
  /** where that first error is: step / chain steps (0: the first step, 1: the answer line), averaged over a problem's localised errors, then over problems */
  errorAt: ProblemMean;
  /** the first-error labels of the wrong completions, by kind */
  firstErrors: Record<LabelKind, number>;
  /**
   * tokens per solved problem: completion tokens over all samples / correct samples (each sample one
   * attempt at its problem; equal to mean tokens per sample / mean accuracy); null with nothing solved.
   * `se`: the delta-method (ratio-estimator) SE over problems, sqrt(sum_p (T_p - R C_p)^2 / (P (P - 1))) / mean C
   */
  tokensPerSolved: { value: number | null; se: number | null; tokens: number; solved: number };
}

/** Mean and SE (sample SD / sqrt(k)) of the defined values. */
function problemMean(values: readonly (number | null)[]): ProblemMean {
  const xs = values.filter((v): v is number => v !== null);
  const k = xs.length;
  if (k === 0) return { mean: null, se: null, problems: 0 };
  const mean = xs.reduce((a, x) => a + x, 0) / k;
  const se = k < 2 ? null : Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (k - 1) / k);
  return { mean, se, problems: k };
}

const average = (xs: readonly number[]): number | null => (xs.length === 0 ? null : xs.reduce((a, x) => a + x, 0) / xs.length);

/** The Step-Quality metrics of `problems` (each with its chain). Throws a RangeError on none. */
export function stepQuality(problems: readonly StepQualityProblem[]): StepQuality {
  if (problems.length === 0) throw new RangeError('stepQuality: no problems');
  const firstErrors = Object.fromEntries([...ERROR_KINDS, 'correct', 'unlabelled'].map((k) => [k, 0])) as Record<LabelKind, number>;
  const density: (number | null)[] = [];
  const localised: (number | null)[] = [];
  const errorAt: (number | null)[] = [];
  let samples = 0;
  let noSteps = 0;
  let wrong = 0;
  let tokens = 0;
  let solved = 0;
  for (const p of problems) {
    const n = p.chain.steps.length;
    const dens: number[] = [];
    const found: number[] = [];
    const at: number[] = [];
    for (const s of p.samples) {
      samples++;
      const labels = labelSteps(s.text);
      const steps = labels.filter((l) => l !== 'answer').length;
      if (steps === 0) noSteps++;
      else dens.push(labels.filter((l) => l === 'useful').length / steps);
      if (s.correct) continue;
      wrong++;
      const e = labelCompletion(p.chain, s.text);
      firstErrors[e.kind]++;
      const ok = e.kind !== 'unlabelled' && e.kind !== 'correct';
      found.push(ok ? 1 : 0);
      if (ok) at.push(e.step / n);
    }
    density.push(average(dens));
    localised.push(average(found));
    errorAt.push(average(at));
    tokens += p.tokens;
    solved += p.samples.filter((s) => s.correct).length;
  }
  return {
    problems: problems.length,
    samples,
    usefulDensity: problemMean(density),
    noSteps,
    wrong,
    localised: problemMean(localised),
    errorAt: problemMean(errorAt),
    firstErrors,
    tokensPerSolved: { ...ratioWithSe(problems), tokens, solved },
  };
}

/** R = sum T / sum C and its delta-method SE over problems (null with C all 0; SE null for fewer than 2 problems). */
function ratioWithSe(problems: readonly StepQualityProblem[]): { value: number | null; se: number | null } {
  const P = problems.length;
  const T = problems.map((p) => p.tokens);
  const C = problems.map((p) => p.samples.filter((s) => s.correct).length);
  const sumC = C.reduce((a, c) => a + c, 0);
  if (sumC === 0) return { value: null, se: null };
  const R = T.reduce((a, t) => a + t, 0) / sumC;
  if (P < 2) return { value: R, se: null };
  const ss = T.reduce((a, t, i) => a + (t - R * C[i]!) ** 2, 0);
  return { value: R, se: Math.sqrt(ss / (P * (P - 1))) / (sumC / P) };
}
