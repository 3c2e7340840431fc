/**
 * A training loop's progress on a command's stderr (`rlvr train`, `rlvr compare`): one line per
 * step, a live bar on a terminal, a line every five steps in a log file.
 */
import type { CliIo } from './cli.js';
import { StatusLine } from './status-line.js';

/** Where a training run stands after a step (or after its step-0 evaluation, with step 0). */
export interface StepProgress {
  step: number;
  steps: number;
  /** mean reward of this step's rollouts (NaN at step 0) */
  reward: number;
  /** the latest held-out accuracy */
  accuracy: number;
  /** median wall seconds of the training steps so far */
  secondsPerStep: number;
}

/**
 * One progress line: `[#######.......]  42/120  reward 0.41  acc 63.2%  1.8 s/step  eta 2m20s`.
 * `width` is the bar's width in characters.
 */
export function progressLine(p: StepProgress, width = 24): string {
  const frac = p.steps > 0 ? Math.min(1, p.step / p.steps) : 0;
  const filled = Math.round(frac * width);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  const steps = `${String(p.step).padStart(String(p.steps).length)}/${p.steps}`;
  const reward = Number.isFinite(p.reward) ? p.reward.toFixed(2) : '  - ';
  const acc = Number.isFinite(p.accuracy) ? `${(100 * p.accuracy).toFixed(1)}%` : '-';
  const rate = Number.isFinite(p.secondsPerStep) ? `${p.secondsPerStep.toFixed(1)} s/step` : '- s/step';
  const eta = Number.isFinite(p.secondsPerStep) ? `eta ${duration(p.secondsPerStep * (p.steps - p.step))}` : 'eta -';
  return `${bar} ${steps}  reward ${reward}  acc ${acc}  ${rate}  ${eta}`;
}

/** A lap timer: each call returns the seconds since the previous call (or since `stopwatch()`), for a step's phases. */
export function stopwatch(): () => number {
  let t = performance.now();
  return () => {
    const now = performance.now();
    const s = (now - t) / 1000;
    t = now;
    return s;
  };
}

/** `95` -> `1m35s`; `3700` -> `1h01m`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Progress on stderr for `prog`: a live bar on a terminal, a line every five steps otherwise; `status` words a step. */
export function stepLogger<P extends StepProgress>(
  prog: string,
  quiet: boolean,
  stream: CliIo['stderr'],
  live: boolean,
  status: (p: P) => string,
) {
  const out = new StatusLine(stream, prog, { live, quiet });
  return {
    info: (m: string) => out.line(m),
    warn: (m: string) => out.line(`warning: ${m}`),
    progress: (p: P) => out.status(status(p), p.step === p.steps || p.step % 5 === 0),
    done: () => out.done(),
  };
}

/** The median of `xs` (NaN when empty): a run's time per step, which one slow first step does not move. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
