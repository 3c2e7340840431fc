import { z } from 'zod';

/**
 * Learning-rate schedules, as a function of the optimizer step (0-based).
 * Warmup is linear from lr/warmupSteps at step 0 up to lr at step warmupSteps - 1,
 * and applies to every schedule (the GRAIL reference's `constant` ignores its
 * warmup; ours does not).
 */
export const LrScheduleSchema = z
  .object({
    type: z.enum(['constant', 'linear', 'cosine']).default('constant'),
    lr: z.number().positive().default(1e-6),
    warmupSteps: z.number().int().nonnegative().default(0),
    /** total optimizer steps; needed by `linear` and `cosine` decay */
    totalSteps: z.number().int().positive().optional(),
    /** final lr as a fraction of lr, for `linear` and `cosine` */
    minLrRatio: z.number().min(0).max(1).default(0),
  })
  .strict()
  .refine((s) => s.type === 'constant' || s.totalSteps !== undefined, {
    message: 'totalSteps is required for linear and cosine schedules',
    path: ['totalSteps'],
  });
export type LrSchedule = z.output<typeof LrScheduleSchema>;

/** The learning rate at optimizer step `step` (0-based). */
export function learningRate(s: LrSchedule, step: number): number {
  if (s.warmupSteps > 0 && step < s.warmupSteps) return (s.lr * (step + 1)) / s.warmupSteps;
  if (s.type === 'constant') return s.lr;
  const total = s.totalSteps!;
  const span = Math.max(total - s.warmupSteps, 1);
  const progress = Math.min(Math.max((step - s.warmupSteps) / span, 0), 1);
  const floor = s.lr * s.minLrRatio;
  if (s.type === 'linear') return floor + (s.lr - floor) * (1 - progress);
  return floor + (s.lr - floor) * 0.5 * (1 + Math.cos(Math.PI * progress));
}
