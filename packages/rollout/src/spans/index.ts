/**
 * `@rlvr/rollout/spans`: the answer span locator and vocabulary files, without TensorFlow.js or a
 * tokenizer engine (a tokenizer is anything with `tokenBytes(id)`).
 */
export { SpanOptionsSchema, spanLocator, locateAnswerSpans, fillBatchSpans } from '@rlvr/core';
export type { TokenBytes, SpanOptions, SpanOptionsInput, SpanLocator } from '@rlvr/core';
export { VocabFileSchema, vocabFromJson, loadVocab } from './vocab.js';
export type { Vocab, VocabFile } from './vocab.js';
export { RolloutError } from '../errors.js';
export type { RolloutErrorCode } from '../errors.js';
