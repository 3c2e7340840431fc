import { StatusLine } from '@rlvr/core';
import type { CliIo } from '@rlvr/core';
import type { TrainProgress } from './run.js';

/**
 * One progress line: `[#######.......]  42/120  reward 0.41  acc 63.2%  1.8 s/step  eta 2m20s`.
 * `width` is the bar's width in characters.
 */
export function progressLine(p: TrainProgress, width = 24): string {
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

/** `95` -> `1m35s`; `3700` -> `1h01m`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Progress on stderr for `prog`: a live bar on a terminal, a line every five steps otherwise; `status` words a step. */
export function terminalLogger<P extends TrainProgress>(
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
