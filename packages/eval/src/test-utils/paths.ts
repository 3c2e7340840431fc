import { fileURLToPath } from 'node:url';

/**
 * The embedded checkpoint (344k parameters, synthetic arithmetic) that `@rlvr/reference-trainer`
 * ships, read in place: the tests need a real model that solves its task about half the time, and
 * this one is the numbers `rlvr train` reports. (nx's test inputs of this package include it.)
 */
export const WARMUP = fileURLToPath(new URL('../../../reference-trainer/assets/warmup', import.meta.url));

/** 16 problems of the warm-up's own task (rows of `rlvr-rollout synth`). */
export const DATA = fileURLToPath(new URL('../../test/fixtures/synthetic-16.jsonl', import.meta.url));

/** The built bin (nx builds the package before its tests). */
export const BIN = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
