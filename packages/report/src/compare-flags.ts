/**
 * The command-line values of a comparison (`rlvr compare`): row and seed lists, the primary
 * contrast, the sequential plan, the threshold. Each bad value is a usage error naming its flag.
 */
import { intFlag, usageError } from '@rlvr/core';
import { parseThreshold } from './compare-stats.js';
import type { Threshold } from './compare-stats.js';
import { sequentialLooks } from './sequential.js';

/** `grpo, grail` -> ['grpo', 'grail']; an empty item or one listed twice is an error. */
export function listFlag(flag: string, v: string): string[] {
  const items = v.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw usageError(`must be a comma-separated list of names (got ${JSON.stringify(v)})`, flag);
  const twice = items.find((x, i) => items.indexOf(x) !== i);
  if (twice !== undefined) throw usageError(`lists ${JSON.stringify(twice)} twice`, flag);
  return items;
}

/** The first `n` seeds counting up from the config's seed (default 0). */
export function firstSeeds(n: number, configSeed: unknown): number[] {
  const first = typeof configSeed === 'number' && Number.isInteger(configSeed) && configSeed >= 0 ? configSeed : 0;
  return Array.from({ length: n }, (_, i) => first + i);
}

/** `--seeds`: `3` is three seeds from the config's seed (default 0); `0,5,9` those seeds (each 0 to 2^32 - 1). */
export function seedsFlag(v: string, configSeed: unknown): number[] {
  if (v.includes(',')) return listFlag('seeds', v).map((s) => intFlag({ seeds: s }, 'seeds', { min: 0, max: 0xffffffff })!);
  return firstSeeds(intFlag({ seeds: v }, 'seeds', { min: 1, max: 1000 })!, configSeed);
}

/** `--primary grail:dr-grpo` -> ['grail', 'dr-grpo'], two different rows among `estimators`. */
export function primaryFlag(v: string, estimators: readonly string[]): [string, string] {
  const parts = v.split(':').map((s) => s.trim());
  if (parts.length !== 2 || parts.some((p) => p === '') || parts[0] === parts[1])
    throw usageError(`must be two different estimators as A:B, e.g. grail:dr-grpo (got ${JSON.stringify(v)})`, '--primary');
  for (const p of parts)
    if (!estimators.includes(p))
      throw usageError(`${JSON.stringify(p)} is not among the estimators (${estimators.join(', ')})`, '--primary');
  return parts as [string, string];
}

/** The pairs at each of `looks` looks of a sequential comparison of at most `maxSeeds` pairs (`sequentialLooks`), a misfit named on `--looks`. */
export function looksFlag(maxSeeds: number, looks: number): number[] {
  try {
    return sequentialLooks(maxSeeds, looks);
  } catch (err) {
    throw usageError(`${(err as Error).message.replace(/^sequentialLooks: /, '')} (--max-seeds ${maxSeeds})`, '--looks');
  }
}

/** `--threshold`: `parseThreshold`, its error as a usage error. */
export function thresholdFlag(v: string): Threshold {
  try {
    return parseThreshold(v);
  } catch (err) {
    throw usageError((err as Error).message, 'threshold');
  }
}

/** `seeds 0-14` for three or more consecutive seeds, else the list: `seeds 3, 7, 9`, `seed 15` (the line before hours of training). */
export function seedList(seeds: readonly number[]): string {
  if (seeds.length > 2 && seeds.every((x, i) => x === seeds[0]! + i)) return `seeds ${seeds[0]}-${seeds.at(-1)}`;
  return `seed${seeds.length === 1 ? '' : 's'} ${seeds.join(', ')}`;
}
