export { PolicyError } from './errors.js';
export type { PolicyErrorCode } from './errors.js';
export { ModelConfigSchema, parseModelConfig, modelDims, parameterShapes } from './config.js';
export type { ModelConfig, ModelConfigInput, ModelDims } from './config.js';
export { Qwen3Model, KVCache, positionsFromMask } from './model.js';
export type { ForwardInput, LayerKV } from './model.js';
export { tokenLogprobs, tokenLogprobsReference } from './logprobs.js';
export { setTransposeCacheLimit, transposeCacheBytes, DEFAULT_TRANSPOSE_CACHE_BYTES } from './ops.js';
export type { TokenLogprobs, TokenLogprobsOptions } from './logprobs.js';
export { microBatchLogprobs, batchLogprobs } from './batch-logprobs.js';
export type { BatchLogprobsOptions } from './batch-logprobs.js';
export {
  SafetensorsFile,
  CheckpointReader,
  writeSafetensors,
  writeCheckpointWeights,
  floatToBf16,
  floatToHalf,
  halfToFloat,
  INDEX_FILE,
  SINGLE_FILE,
} from './safetensors.js';
export type { SafetensorsDtype, WritableDtype, TensorInfo, HostTensor, TensorToWrite } from './safetensors.js';
export { loadModel, saveModel, readModelConfig, CONFIG_FILE } from './checkpoint.js';
export type { LoadOptions, SaveOptions } from './checkpoint.js';
export { selectBackend, BACKEND_NAMES, BACKEND_ENV, BackendOptionsSchema } from './backend.js';
export type { BackendName, BackendOptions, Logger } from './backend.js';
export {
  Tokenizer,
  byteSpanToTokens,
  utf8Offset,
  checkEncodable,
  BUILTIN_ENCODINGS,
  MAX_ENCODE_CHARS,
  MAX_RUN_CHARS,
} from './tokenizer/index.js';
export type { BuiltinEncoding, EncodeOptions, TokenizerInfo } from './tokenizer/index.js';
export { loadHfTokenizer, hfToTiktoken } from './tokenizer/index.js';
export type { TiktokenParts } from './tokenizer/index.js';
export { prunedVocab, prunedTokenizer, savePrunedVocab, loadPrunedVocab, PRUNED_FILE } from './tokenizer/index.js';
export type { PrunedVocab } from './tokenizer/index.js';
export { loadTokenizer, tokenizerKinds } from './tokenizer/index.js';
export type { TokenizerKind } from './tokenizer/index.js';
export { ChatTemplate, plainChatTemplate, chatmlTemplate } from './tokenizer/index.js';
export type { ChatMessage, ChatRenderOptions, ChatTemplateOptions, ApplyChatTemplate } from './tokenizer/index.js';
export { openPolicyDir, modelChatTemplate, defaultEosTokenIds, TOKENIZER_CONFIG_FILE } from './model-dir.js';
export { exportModelDir } from './export-dir.js';
export type { OpenPolicyDirOptions, PolicyDir, ModelChatTemplate } from './model-dir.js';
export { completionLogprobs, packSequences } from './sequences.js';
export type { SequenceRow, PackedSequences } from './sequences.js';
export { policyCommands, policyInfoCommand, policyLogprobsCommand } from './commands.js';
export { PolicyWorkers, compiledModuleUrl } from './workers/engine.js';
export type { PolicyWorkersOptions, RunTiming } from './workers/engine.js';
export { paramLayout } from './workers/layout.js';
export { splitRollouts } from './workers/split.js';
export type { ParamLayout, ParamSlot } from './workers/layout.js';
export type { WorkerContext, WorkerTask } from './workers/protocol.js';
