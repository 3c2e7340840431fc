/**
 * The rollout-stage part of the method contract: after every group of a step is sampled and graded,
 * a method may ask for some problems to be sampled again on another prompt (SCOPE-RL re-samples a
 * failing group on its scaffolded prompt), and the new group replaces the old one in the update.
 * The types live here so that the sampler side (`@rlvr/rollout`) and the method side
 * (`@rlvr/advantages`) share them; `replaceGroups` is the batch surgery.
 */
import type { RolloutBatch } from './batch.js';
import { CoreError } from './errors.js';
import { gatherRows, type RowPick } from './rows.js';

/** A JSON value: what per-problem auxiliary data is made of (it comes from data files as it is). */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/**
 * Per-problem auxiliary data by name: what a method reads about a problem besides its question and
 * answer (SCOPE-RL's `scaffold`: sub-questions and their hidden sub-answers). It comes from the task
 * or from the data file's fields (`@rlvr/rollout`'s `FieldMapping.aux`) and is never shown to the policy.
 */
export type ProblemAux = { readonly [key: string]: JsonValue };

/** One sampled and graded group, as a rollout stage sees it. G = its rollouts. */
export interface ScoredGroup {
  /** the group id in the batch (the index of its problem in the step) */
  readonly group: number;
  readonly question: string;
  /** the gold answer */
  readonly answer: string;
  readonly aux: ProblemAux | undefined;
  /** where a data file's problem comes from (for error messages) */
  readonly source: { file: string; line: number } | undefined;
  /** [G] the verifier's rewards */
  readonly rewards: Float32Array;
  /** [G] the completions' text */
  readonly texts: readonly string[];
  /** [G] the completions' lengths in tokens */
  readonly lengths: Int32Array;
}

/** Sample group `group`'s problem again on the prompt rendered from `question` (the run's prompt builder and chat template). */
export interface GroupResample {
  readonly group: number;
  readonly question: string;
}

/**
 * A method's rollout stage (`AdvantageMethod.rolloutStage`), given the method's parsed options.
 * `route` sees every group of the step once and names the groups to sample again (each at most once);
 * the trainer samples them with the same sampler, group size and options as the first time, `grade`s
 * the new completions (an errored one gets 0 without asking), and replaces each old group with its new one.
 * It is called once per step with nothing carried between steps, so a resumed run routes as an
 * uninterrupted one does.
 */
export interface RolloutStage<Config = Record<string, unknown>> {
  route(groups: readonly ScoredGroup[], config: Config): readonly GroupResample[] | Promise<readonly GroupResample[]>;
  /** the reward of one completion of a re-sampled group */
  grade(text: string, group: ScoredGroup, resample: GroupResample, config: Config): number | Promise<number>;
  /**
   * Optional, after routing: every group of the batch that is trained on (re-sampled ones with their new
   * rollouts and grades) once more, to re-grade it: the new rewards `[G]`, or undefined to keep them
   * (SCOPE-RL's stage 2 adds a process-shape reward to correct trajectories here).
   */
  regrade?(group: ScoredGroup, config: Config): Float32Array | undefined;
}

/** A rollout stage with its method's options bound (what a prepared estimator carries). */
export interface BoundRolloutStage {
  /** the method's name, for error messages */
  readonly method: string;
  route(groups: readonly ScoredGroup[]): readonly GroupResample[] | Promise<readonly GroupResample[]>;
  grade(text: string, group: ScoredGroup, resample: GroupResample): number | Promise<number>;
  regrade?(group: ScoredGroup): Float32Array | undefined;
}

/** `stage` with `config` bound, named for method `method`. */
export function bindRolloutStage<Config>(method: string, stage: RolloutStage<Config>, config: Config): BoundRolloutStage {
  const bound: BoundRolloutStage = {
    method,
    route: (groups) => stage.route(groups, config),
    grade: (text, group, resample) => stage.grade(text, group, resample, config),
  };
  const { regrade } = stage;
  return regrade === undefined ? bound : { ...bound, regrade: (group) => regrade(group, config) };
}

/**
 * Refuse, with a `CoreError('invalid_resample')` naming the method and the group, a request for a
 * group that is not in the step (`numGroups` groups), for one group twice, or without a question.
 */
export function checkResamples(requests: readonly GroupResample[], numGroups: number, method: string): void {
  const seen = new Set<number>();
  requests.forEach((r, index) => {
    const where = { index, field: 'group' };
    if (!Number.isInteger(r.group) || r.group < 0 || r.group >= numGroups)
      throw new CoreError(
        'invalid_resample',
        `method ${method} asked to re-sample group ${r.group}, but the step has groups 0..${numGroups - 1}`,
        where,
      );
    if (seen.has(r.group))
      throw new CoreError(
        'invalid_resample',
        `method ${method} asked to re-sample group ${r.group} twice in one step: a group is re-sampled at most once per step`,
        where,
      );
    if (typeof r.question !== 'string' || r.question.trim() === '')
      throw new CoreError('invalid_resample', `method ${method} asked to re-sample group ${r.group} without a question`, {
        index,
        field: 'question',
      });
    seen.add(r.group);
  });
}

/**
 * Replace the rollouts of groups `groups[k]` of `batch` with the rollouts of group k of `fresh`
 * (group ids 0..K-1, each present): the new rows take the place of the old group's first row, under
 * the old group id, with their own prompts (offsets recomputed), completions, behaviour log-probs,
 * rewards, finish codes, spans and references; every other row stays as it is, in order.
 * `origin[n]` says where row n of the result comes from: `r >= 0` is row r of `batch`, `-1 - j` row j of `fresh`.
 * Both batches have behaviour log-probs or neither has (`CoreError('invalid_batch')` otherwise);
 * a group named twice, or absent from either batch, is a `CoreError('invalid_resample')`.
 */
export function replaceGroups(
  batch: RolloutBatch,
  groups: readonly number[],
  fresh: RolloutBatch,
): { batch: RolloutBatch; origin: Int32Array } {
  if ((batch.behaviorLogprobs === undefined) !== (fresh.behaviorLogprobs === undefined))
    throw new CoreError(
      'invalid_batch',
      `the replacement rollouts ${fresh.behaviorLogprobs ? 'have' : 'lack'} behaviour log-probs and the batch ${batch.behaviorLogprobs ? 'has' : 'lacks'} them: they must come from the same sampler`,
      { field: 'behaviorLogprobs' },
    );
  const slot = new Map<number, number>();
  groups.forEach((g, k) => {
    if (slot.has(g)) throw new CoreError('invalid_resample', `group ${g} is replaced twice`, { index: k, field: 'group' });
    slot.set(g, k);
  });
  const freshRows: number[][] = groups.map(() => []);
  for (let j = 0; j < fresh.numRollouts; j++) {
    const k = fresh.groupIndex[j]!;
    if (k >= groups.length)
      throw new CoreError('invalid_resample', `replacement rollout ${j} is in group ${k}, but ${groups.length} groups are replaced`, {
        rollout: j,
        field: 'groupIndex',
      });
    freshRows[k]!.push(j);
  }
  freshRows.forEach((rows, k) => {
    if (rows.length === 0)
      throw new CoreError('invalid_resample', `no replacement rollouts for group ${groups[k]}`, { index: k, field: 'group' });
  });
  const picks: RowPick[] = [];
  const origin: number[] = [];
  const done = new Set<number>();
  for (let i = 0; i < batch.numRollouts; i++) {
    const g = batch.groupIndex[i]!;
    const k = slot.get(g);
    if (k === undefined) {
      picks.push({ from: batch, row: i, group: g });
      origin.push(i);
    } else if (!done.has(k)) {
      done.add(k);
      for (const j of freshRows[k]!) {
        picks.push({ from: fresh, row: j, group: g });
        origin.push(-1 - j);
      }
    }
  }
  groups.forEach((g, k) => {
    if (!done.has(k)) throw new CoreError('invalid_resample', `group ${g} is not in the batch`, { index: k, field: 'group' });
  });
  return { batch: gatherRows(picks, [batch, fresh]), origin: Int32Array.from(origin) };
}
