import {
  AdvantagesError,
  composeEstimator,
  defineMethod,
  grpo,
  uniform,
  type AdvantageEstimator,
  type ConfigSchema,
} from '@rlvr/advantages';
import type { GroupResample, RolloutStage, ScoredGroup } from '@rlvr/core';
import { z } from 'zod';
import { scaffoldReward } from './reward.js';
import { scaffoldOf, scaffoldedQuestion } from './scaffold.js';
import { labelSteps } from '@rlvr/tasks';
import { processShape, type ProcessShapeOptions } from './process-shape.js';

/** SCOPE-RL's own options (Stage 1, adaptive scaffolded RL); the rest are GRPO's. */
export const ScopeRlOptions = {
  /** a group is routed to its scaffold when its mean outcome reward is below tau */
  tau: z.number().min(0).max(1).default(0.5),
  /** weight of the sub-answer prefix in the scaffolded reward; the main answer gets 1 - beta */
  beta: z.number().min(0).max(1).default(0.5),
  /** the problem's aux field holding its scaffold (`rlvr train`: a data file's `scaffold` field); without one, a scaffold is made from its `chain` */
  scaffoldField: z.string().min(1).default('scaffold'),
  /** stage 2: add the process-shape reward to correct trajectories (every step of the run) */
  qpr: z.boolean().default(false),
  /** stage 2's coefficients (chosen; the paper's were not reachable): the useful-step share's weight */
  usefulWeight: z.number().min(0).default(0.2),
  /** the penalty on the share of low-value steps (redundant, wrong, filler) */
  lowValuePenalty: z.number().min(0).default(0.2),
  /** the penalty per unit of ln(1 + completion tokens) */
  lengthPenalty: z.number().min(0).default(0.02),
};
type Options = { tau: number; beta: number; scaffoldField: string; qpr: boolean } & ProcessShapeOptions;

/** The mean of `rewards` (0 for none). */
function mean(rewards: Float32Array): number {
  let s = 0;
  for (const r of rewards) s += r;
  return rewards.length === 0 ? 0 : s / rewards.length;
}

/**
 * Which groups go to their scaffold this step: those whose problem has one and whose mean outcome
 * reward is below tau, each with its scaffolded question. Every scaffold seen is checked (a bad one
 * fails the step, naming the problem), routed or not. Nothing is remembered: a problem whose group
 * reaches tau is not routed, so the scaffold is withdrawn as soon as the policy solves it unaided.
 */
export function routeGroups(groups: readonly ScoredGroup[], c: Pick<Options, 'tau' | 'scaffoldField'>): GroupResample[] {
  const out: GroupResample[] = [];
  for (const g of groups) {
    const scaffold = scaffoldOf(g, c.scaffoldField);
    if (scaffold !== undefined && mean(g.rewards) < c.tau) out.push({ group: g.group, question: scaffoldedQuestion(g.question, scaffold) });
  }
  return out;
}

/** The rollout stage: route failing groups to their scaffold, grade the scaffolded completions by SCOPE-RL's reward. */
export const scopeRlStage: RolloutStage<Options> = {
  route: (groups, c) => routeGroups(groups, c),
  grade(text, group, _resample, c) {
    const scaffold = scaffoldOf(group, c.scaffoldField)!; // routed groups have one
    return scaffoldReward(text, scaffold, group.answer, c.beta, group.question).reward;
  },
  regrade: (group, c) => (c.qpr ? qprRewards(group, c) : undefined),
};

/**
 * Stage 2, quality-aware process RL: a correct trajectory (reward 1, the most either grader gives: the
 * verifier's, or the scaffolded reward with every sub-answer and the main answer right) gets its
 * process-shape term added (`processShape` of its steps as `labelSteps` reads them); every other keeps its reward.
 */
export function qprRewards(group: Pick<ScoredGroup, 'rewards' | 'texts' | 'lengths'>, c: ProcessShapeOptions): Float32Array {
  return group.rewards.map((r, j) => (r >= 1 ? r + processShape(labelSteps(group.texts[j]!), group.lengths[j]!, c) : r));
}

/**
 * `scope-rl`: GRPO's advantages ((r - group mean) / std; a group of equal rewards gets 0) on a batch
 * whose failing groups were re-sampled on their scaffolds (the rollout stage) and graded by the
 * scaffolded reward; with `qpr`, correct trajectories get stage 2's process-shape term. Options: GRPO's, plus
 * `tau`, `beta`, `scaffoldField`, `qpr`, `usefulWeight`, `lowValuePenalty` and `lengthPenalty`.
 */
function scopeRl(base: AdvantageEstimator): AdvantageEstimator<ConfigSchema> {
  const own = Object.keys(ScopeRlOptions);
  for (const key of own)
    if (key in base.configSchema.shape)
      throw new AdvantagesError('config_clash', `estimator scope-rl: option "${key}" is declared by both ${base.name} and scope-rl`, {
        field: key,
      });
  const configSchema = z.strictObject({ ...base.configSchema.shape, ...ScopeRlOptions }).superRefine((value, ctx) => {
    const theirs = Object.fromEntries(Object.entries(value).filter(([k]) => !own.includes(k)));
    const r = base.configSchema.safeParse(theirs);
    if (!r.success) for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });
  return defineMethod({
    name: 'scope-rl',
    description: 'SCOPE-RL stage 1: failing groups re-sampled on their answer-hidden scaffold, prefix-consistent reward, GRPO',
    configSchema,
    needs: base.needs,
    batchCoupled: base.batchCoupled as boolean | ((config: unknown) => boolean),
    compute({ batch, signals, config, state }, out) {
      const a = base.estimate(batch, signals, config, state);
      out.set(a.advantages);
      return { weights: a.weights, sequenceAdvantages: a.sequenceAdvantages, metrics: a.metrics };
    },
    rolloutStage: scopeRlStage as RolloutStage<z.output<typeof configSchema>>,
  }) as AdvantageEstimator<ConfigSchema>;
}

export const scopeRlEstimator = scopeRl(composeEstimator(grpo, uniform, 'grpo'));
