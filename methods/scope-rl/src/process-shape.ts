import type { StepLabel } from '@rlvr/tasks';

/** Stage 2's coefficients (chosen: the paper's were not reachable). */
export interface ProcessShapeOptions {
  usefulWeight: number;
  lowValuePenalty: number;
  lengthPenalty: number;
}

/**
 * The process-shape term of a correct completion: usefulWeight * (useful steps / steps) - lowValuePenalty *
 * (redundant, wrong and filler steps / steps) - lengthPenalty * ln(1 + tokens), where the steps are the
 * lines that are not answers (with none, both ratios are 0).
 */
export function processShape(labels: readonly StepLabel[], tokens: number, o: ProcessShapeOptions): number {
  let useful = 0;
  let low = 0;
  for (const l of labels) {
    if (l === 'useful') useful++;
    else if (l !== 'answer') low++;
  }
  const steps = useful + low;
  const ratio = (n: number) => (steps === 0 ? 0 : n / steps);
  return o.usefulWeight * ratio(useful) - o.lowValuePenalty * ratio(low) - o.lengthPenalty * Math.log1p(tokens);
}
