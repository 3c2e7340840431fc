export { RolloutError } from './errors.js';
export type { RolloutErrorCode } from './errors.js';

// answer spans in token space
export { SpanOptionsSchema, spanLocator, locateAnswerSpans, fillBatchSpans } from './spans.js';
export type { TokenBytes, SpanOptions, SpanOptionsInput, SpanLocator } from './spans.js';
export { boxedContent, DEFAULT_BOX_MARKERS } from './boxes.js';
export { VocabFileSchema, vocabFromJson, loadVocab } from './vocab.js';
export type { Vocab, VocabFile } from './vocab.js';
export { vocabFromHfTokenizer, loadHfTokenizer } from './hf-tokenizer.js';
export { vocabLoader, hfLoader, tiktokenLoader, prunedLoader, modelLoader, defaultTokenizerLoaders, loadTokenizer } from './tokenizer-spec.js';
export type { TokenizerLoader } from './tokenizer-spec.js';
export { runCli } from './cli-run.js';
export type { CliIo } from './cli-io.js';

// files
export { readJsonl } from './jsonl.js';
export type { JsonlLine } from './jsonl.js';

// datasets
export { FieldMappingSchema, DATASET_PRESETS, resolveMapping, taskFromRow, readTasks, loadTasks } from './datasets.js';
export type { Task, FieldMapping, FieldMappingInput, DatasetPreset } from './datasets.js';

// prompts
export { BOXED_INSTRUCTION, PromptOptionsSchema, promptBuilder } from './prompt.js';
export type { PromptOptions, PromptOptionsInput, PromptBuilder } from './prompt.js';
// defined in @rlvr/policy (one meaning); re-exported while callers move their imports there
export { plainChatTemplate, chatmlTemplate, modelChatTemplate } from '@rlvr/policy';
export type { ChatMessage, ChatTemplateOptions, ApplyChatTemplate, ModelChatTemplate } from '@rlvr/policy';

// synthetic tasks
export { SYNTHETIC_OPERATIONS, SyntheticOptionsSchema, syntheticGenerator, applyOperation } from './synthetic.js';
export type { SyntheticOperation, SyntheticOptions, SyntheticOptionsInput, SyntheticStep, SyntheticTask, SyntheticGenerator } from './synthetic.js';

// sampling
export { silentLogger } from './sampler.js';
export type { Sampler, SamplePrompt, SamplingParams, SampleRequest, SampledCompletion, PromptSamples, Logger } from './sampler.js';
export { SampleOptionsSchema, sampleGroups } from './sample-groups.js';
export type { SampleOptions, SampleOptionsInput, SampleContext, SampledGroups } from './sample-groups.js';
export { HttpSamplerOptionsSchema, httpSampler } from './http-sampler.js';
export type { HttpSamplerOptions, HttpSamplerOptionsInput, HttpSamplerEvent, HttpSamplerHooks } from './http-sampler.js';
export { CompletionResponseSchema, ChatResponseSchema } from './http-protocol.js';
export { PolicySamplerOptionsSchema, policySampler } from './policy-sampler.js';
export { policyTokenBytes } from './policy-token-bytes.js';
export type { PolicySampler, PolicySamplerOptions, PolicySamplerOptionsInput, PolicySamplerHooks } from './policy-sampler.js';
export { pickToken } from './token-sampling.js';
export type { TokenChoice, Picked } from './token-sampling.js';
export { StopMatcher } from './stop-matcher.js';
export { PolicyServerOptionsSchema, startPolicyServer } from './serve.js';
export type { PolicyServer, PolicyServerOptions, PolicyServerOptionsInput, ServedPolicy } from './serve.js';
export { ServeCompletionRequestSchema, ServeChatRequestSchema } from './serve-protocol.js';
export { runServe } from './cli-serve.js';
export type { ServeResult } from './cli-serve.js';
