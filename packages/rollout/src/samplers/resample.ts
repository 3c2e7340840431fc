import {
  FINISH_CODES,
  METRIC,
  RlvrError,
  checkResamples,
  CoreError,
  replaceGroups,
  type BoundRolloutStage,
  type RolloutBatch,
  type ScoredGroup,
} from '@rlvr/core';
import { RolloutError } from '../errors.js';
import type { PromptTask } from '../data/problems.js';
import { sampleGroups, type SampleContext, type SampleOptionsInput } from './sample-groups.js';
import type { Sampler } from './sampler.js';

/** What the re-sampling reads of a step's problem (group g answers problem g). */
export type ResampleProblem = Pick<PromptTask, 'question' | 'answer' | 'aux' | 'reference' | 'source'>;

/** The step's batch after routing: the re-sampled groups replaced, their texts with them. */
export interface Routed {
  batch: RolloutBatch;
  texts: string[];
  /** the groups that were re-sampled, in the stage's order */
  routed: number[];
  /** [routed] the question each of them was re-sampled on (a scaffolded prompt's question): what its rollouts answer */
  routedQuestions: string[];
  /** `routing/*` (fraction of groups routed, mean rewards of the routed groups before and after, the batch's mean before) and `time/route_s` */
  metrics: Record<string, number>;
}

/**
 * A method's rollout stage on a sampled and graded step (`sampled`: group g answers `problems[g]`).
 * `stage.route` names the groups to sample again and the question of each (checked: each group at most
 * once, `CoreError('invalid_resample')`). Those prompts are rendered (`render`: the run's prompt builder
 * and tokenizer; required once a group is routed) and sampled with `sampler` and the first sample's
 * options (the same group size) under a seed derived from theirs; `stage.grade` scores each new
 * completion (an errored one gets 0), and `replaceGroups` puts the new groups in place of the old.
 * Without a stage, or when nothing is routed, the batch is returned as it is. A stage with `regrade`
 * then re-grades every group of the result (in a copy of the rewards). Deterministic given the
 * sampler's determinism: routing reads only this step's rollouts.
 */
export async function resampleGroups(
  stage: BoundRolloutStage | undefined,
  sampled: { batch: RolloutBatch; texts: string[] },
  problems: readonly ResampleProblem[],
  sampler: Sampler,
  options: SampleOptionsInput,
  render: ((question: string) => number[]) | undefined,
  context: SampleContext = {},
): Promise<Routed> {
  if (stage === undefined) return { ...sampled, routed: [], routedQuestions: [], metrics: {} };
  const t0 = performance.now();
  const routed = await route(stage, sampled, problems, sampler, options, render, context);
  if (stage.regrade !== undefined) regradeGroups(stage, routed, problems);
  routed.metrics[METRIC.timeRoute] = seconds(t0);
  return routed;
}

/** `resampleGroups` without the regrade and the timing. */
async function route(
  stage: BoundRolloutStage,
  sampled: { batch: RolloutBatch; texts: string[] },
  problems: readonly ResampleProblem[],
  sampler: Sampler,
  options: SampleOptionsInput,
  render: ((question: string) => number[]) | undefined,
  context: SampleContext,
): Promise<Routed> {
  const { batch, texts } = sampled;
  const groups = scoredGroups(batch, texts, problems);
  const requests = await stage.route(groups);
  checkResamples(requests, groups.length, stage.method);
  const metrics: Record<string, number> = {
    [METRIC.routingFraction]: groups.length === 0 ? 0 : requests.length / groups.length,
    [METRIC.routingRewardMeanBefore]: mean(batch.rewards),
    [METRIC.routingRewardBefore]: mean(requests.flatMap((r) => Array.from(groups[r.group]!.rewards))),
    [METRIC.routingRewardAfter]: Number.NaN,
  };
  if (requests.length === 0) return { batch, texts, routed: [], routedQuestions: [], metrics };
  if (render === undefined)
    throw new CoreError(
      'invalid_config',
      `method ${stage.method} re-samples groups on new prompts, but the caller gave no prompt renderer`,
      {
        field: 'render',
      },
    );
  const prompts = requests.map((r) => {
    const reference = problems[r.group]!.reference;
    return { tokens: render(r.question), ...(reference && { reference }) };
  });
  const seed = (Math.imul((options.seed ?? 0) ^ 0x5bd1e995, 0x27d4eb2d) + 0x165667b1) >>> 0;
  const fresh = await sampleGroups(prompts, sampler, { ...options, seed }, context);
  for (let j = 0; j < fresh.batch.numRollouts; j++) {
    const k = fresh.batch.groupIndex[j]!;
    const request = requests[k]!;
    const reward = fresh.batch.finish[j] === FINISH_CODES.error ? 0 : await stage.grade(fresh.texts[j]!, groups[request.group]!, request);
    if (typeof reward !== 'number' || !Number.isFinite(reward))
      throw new RolloutError(
        'invalid_response',
        `method ${stage.method} graded completion ${j - firstOf(fresh.batch.groupIndex, k)} of re-sampled group ${request.group} as ${String(reward)}: a reward is a finite number`,
        { index: k, field: 'reward' },
      );
    fresh.batch.rewards[j] = reward;
  }
  metrics[METRIC.routingRewardAfter] = mean(fresh.batch.rewards);
  let replaced: ReturnType<typeof replaceGroups>;
  try {
    replaced = replaceGroups(
      batch,
      requests.map((r) => r.group),
      fresh.batch,
    );
  } catch (err) {
    if (err instanceof RlvrError)
      throw new RolloutError('invalid_response', `method ${stage.method}'s re-sampled groups: ${err.message}`, {}, { cause: err });
    throw err;
  }
  const newTexts = Array.from(replaced.origin, (o) => (o >= 0 ? texts[o]! : fresh.texts[-1 - o]!));
  return {
    batch: replaced.batch,
    texts: newTexts,
    routed: requests.map((r) => r.group),
    routedQuestions: requests.map((r) => r.question),
    metrics,
  };
}

/**
 * The stage's `regrade` over every group of the routed batch: its new rewards (finite, one per rollout) replace
 * the group's in a copy of `routed.batch`; `routing/reward_mean_regraded` is their mean. When the stage keeps every
 * group's rewards (undefined for all), the batch and the metrics are left as they are.
 */
function regradeGroups(stage: BoundRolloutStage, routed: Routed, problems: readonly ResampleProblem[]): void {
  const rows = groupRows(routed.batch, problems.length);
  const rewards = Float32Array.from(routed.batch.rewards);
  let changed = false;
  for (const group of scoredGroups(routed.batch, routed.texts, problems)) {
    const next = stage.regrade!(group);
    if (next === undefined) continue;
    const at = rows[group.group]!;
    if (next.length !== at.length || !next.every(Number.isFinite))
      throw new RolloutError(
        'invalid_response',
        `method ${stage.method} regraded group ${group.group} with ${next.length} rewards (${Array.from(next).join(', ')}): one finite reward per rollout (${at.length})`,
        { index: group.group, field: 'reward' },
      );
    at.forEach((i, j) => (rewards[i] = next[j]!));
    changed = true;
  }
  if (!changed) return;
  routed.batch = { ...routed.batch, rewards };
  routed.metrics[METRIC.routingRewardMeanRegraded] = mean(rewards);
}

/** [groups] the rows of each group id (a row past `numGroups` is an error naming it). */
function groupRows(batch: RolloutBatch, numGroups: number): number[][] {
  const rows: number[][] = Array.from({ length: numGroups }, () => []);
  for (let i = 0; i < batch.numRollouts; i++) {
    const g = batch.groupIndex[i]!;
    if (g >= numGroups)
      throw new RolloutError('invalid_response', `rollout ${i} is in group ${g}, but the step has ${numGroups} problems`, { rollout: i });
    rows[g]!.push(i);
  }
  return rows;
}

/** The groups of a sampled step, each with its problem, rewards and texts (rows found by group id). */
function scoredGroups(batch: RolloutBatch, texts: readonly string[], problems: readonly ResampleProblem[]): ScoredGroup[] {
  const rows = groupRows(batch, problems.length);
  const o = batch.completionOffsets;
  return problems.map((p, g) => ({
    group: g,
    question: p.question,
    answer: p.answer,
    aux: p.aux,
    source: p.source,
    rewards: Float32Array.from(rows[g]!, (i) => batch.rewards[i]!),
    texts: rows[g]!.map((i) => texts[i]!),
    lengths: Int32Array.from(rows[g]!, (i) => o[i + 1]! - o[i]!),
  }));
}

function firstOf(groupIndex: Int32Array, k: number): number {
  return groupIndex.indexOf(k);
}

function mean(xs: ArrayLike<number>): number {
  if (xs.length === 0) return Number.NaN;
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i]!;
  return s / xs.length;
}

function seconds(t0: number): number {
  return (performance.now() - t0) / 1000;
}
