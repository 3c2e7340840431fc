export { verifyAnswer, mathReward, mathRewardBatch } from './verify.js';
export type { VerifyResult, RewardResult } from './verify.js';
export { VerifyOptionsSchema, resolveOptions } from './options.js';
export type { VerifyOptions, VerifyOptionsInput } from './options.js';
export { MathVerifyError } from './errors.js';
export type { MathVerifyErrorCode } from './errors.js';
export { VerifierPool, PoolOptionsSchema } from './pool.js';
export type { PoolOptions, PoolOptionsInput, PoolStats, PoolCallOptions } from './pool.js';
