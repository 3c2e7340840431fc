/**
 * `@rlvr/rollout`: everything, the in-process policy sampler and `rlvr-serve` included (these load
 * TensorFlow.js through `@rlvr/policy`). `@rlvr/rollout/http` and `@rlvr/rollout/spans` hold the
 * parts that need no tfjs.
 */
export { RolloutError } from './errors.js';
export type { RolloutErrorCode } from './errors.js';

// answer spans in token space
export { SpanOptionsSchema, spanLocator, locateAnswerSpans, fillBatchSpans } from '@rlvr/core';
export type { TokenBytes, SpanOptions, SpanOptionsInput, SpanLocator } from '@rlvr/core';
export { VocabFileSchema, vocabFromJson, loadVocab } from './spans/vocab.js';
export type { Vocab, VocabFile } from './spans/vocab.js';

// datasets, prompts, synthetic tasks
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
export { TaskStream, FileStream, splitHeldOut, toPromptTasks, checkPrompts } from './data/problems.js';
export type { Problem, PromptTask, ProblemStream } from './data/problems.js';
export { fileProblems, splitFileProblems } from './data/file-problems.js';
export { VALIDATION_DEFINITION, splitValidation, validationTasks } from './data/validation.js';
export type { FileSplitOptions } from './data/file-problems.js';
export { SyntheticCorpus } from './data/synthetic-corpus.js';
// defined in @rlvr/policy (one meaning); re-exported while callers move their imports there
export { plainChatTemplate, chatmlTemplate, modelChatTemplate } from '@rlvr/policy';
export type { ChatMessage, ChatTemplateOptions, ApplyChatTemplate, ModelChatTemplate } from '@rlvr/policy';

// sampling
export type { Sampler, SamplePrompt, SamplingParams, SampleRequest, SampledCompletion, PromptSamples } from './samplers/sampler.js';
export { SampleOptionsSchema, sampleGroups } from './samplers/sample-groups.js';
export type { SampleOptions, SampleOptionsInput, SampleContext, SampledGroups } from './samplers/sample-groups.js';
export { resampleGroups } from './samplers/resample.js';
export type { ResampleProblem, Routed } from './samplers/resample.js';
export { HttpSamplerOptionsSchema, httpSampler } from './samplers/http-sampler.js';
export type { HttpSamplerOptions, HttpSamplerOptionsInput, HttpSamplerEvent, HttpSamplerHooks } from './samplers/http-sampler.js';
export { CompletionResponseSchema, ChatResponseSchema } from './samplers/http-protocol.js';
export { PolicySamplerOptionsSchema, policySampler } from './samplers/policy-sampler.js';
export type { PolicySampler, PolicySamplerOptions, PolicySamplerOptionsInput, PolicySamplerHooks } from './samplers/policy-sampler.js';
export { policyTokenBytes } from './samplers/policy-token-bytes.js';
export { workerSampler } from './samplers/worker-sampler.js';
export { pickToken } from './samplers/token-sampling.js';
export type { TokenChoice, Picked } from './samplers/token-sampling.js';
export { StopMatcher } from './samplers/stop-matcher.js';

// rlvr-serve
export { PolicyServerOptionsSchema, startPolicyServer } from './serve/server.js';
export type { PolicyServer, PolicyServerOptions, PolicyServerOptionsInput, ServedPolicy } from './serve/server.js';
export { ServeCompletionRequestSchema, ServeChatRequestSchema } from './serve/protocol.js';
export { serveCommand, runServe } from './serve/command.js';
export type { ServeResult } from './serve/command.js';

// rlvr-rollout
export { rolloutCommands } from './cli/commands.js';
export { synthCommand, MAX_SYNTH_COUNT } from './cli/synth.js';
export { spansCommand, tokenBytesFromSpec } from './cli/spans.js';
