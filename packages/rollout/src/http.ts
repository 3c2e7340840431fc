/**
 * `@rlvr/rollout/http`: sampling from OpenAI-compatible servers (vLLM, SGLang, `rlvr-serve`) into a
 * `RolloutBatch`, with datasets, prompts, synthetic tasks and answer spans, without TensorFlow.js.
 */
export { RolloutError } from './errors.js';
export type { RolloutErrorCode } from './errors.js';
export { SpanOptionsSchema, spanLocator, locateAnswerSpans, fillBatchSpans } from '@rlvr/core';
export type { TokenBytes, SpanOptions, SpanOptionsInput, SpanLocator } from '@rlvr/core';
export { VocabFileSchema, vocabFromJson, loadVocab } from './spans/vocab.js';
export type { Vocab, VocabFile } from './spans/vocab.js';
export { FieldMappingSchema, DATASET_PRESETS, resolveMapping, taskFromRow, readTasks, loadTasks } from '@rlvr/tasks';
export type { Task, FieldMapping, FieldMappingInput, DatasetPreset } from '@rlvr/tasks';
export { BOXED_INSTRUCTION, PromptOptionsSchema, promptBuilder } from './data/prompt.js';
export type { PromptOptions, PromptOptionsInput, PromptBuilder } from './data/prompt.js';
export { SYNTHETIC_OPERATIONS, SyntheticOptionsSchema, syntheticGenerator, applyOperation } from '@rlvr/tasks';
export type {
  SyntheticOperation,
  SyntheticOptions,
  SyntheticOptionsInput,
  SyntheticStep,
  SyntheticTask,
  SyntheticGenerator,
} from '@rlvr/tasks';
export type { Sampler, SamplePrompt, SamplingParams, SampleRequest, SampledCompletion, PromptSamples } from './samplers/sampler.js';
export { SampleOptionsSchema, sampleGroups } from './samplers/sample-groups.js';
export type { SampleOptions, SampleOptionsInput, SampleContext, SampledGroups } from './samplers/sample-groups.js';
export { HttpSamplerOptionsSchema, httpSampler } from './samplers/http-sampler.js';
export type { HttpSamplerOptions, HttpSamplerOptionsInput, HttpSamplerEvent, HttpSamplerHooks } from './samplers/http-sampler.js';
export { CompletionResponseSchema, ChatResponseSchema } from './samplers/http-protocol.js';
