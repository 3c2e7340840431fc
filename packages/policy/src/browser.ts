/**
 * `@rlvr/policy` for a browser (the package's `browser` export condition): the model, log-probs,
 * safetensors and model loading from bytes a page fetched, the tokenizers and chat templates, and the
 * page's backend (`selectBrowserBackend`: webgpu on `navigator.gpu`, else cpu). Nothing here imports
 * Node; `index.ts` adds what reads and writes files, the Node backends and the worker threads.
 */
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
export { SafetensorsBytes, halfToFloat } from './safetensors-format.js';
export type { SafetensorsDtype, WritableDtype, TensorInfo, HostTensor, TensorToWrite } from './safetensors-format.js';
export { loadModelBytes } from './model-bytes.js';
export type { LoadOptions } from './model-bytes.js';
export type { BackendName, BackendOptions, Logger } from './backend.js';
export { selectBrowserBackend, initTokenizerWasm, BROWSER_BACKENDS } from './browser-backend.js';
export type { BrowserBackend, BrowserBackendName } from './browser-backend.js';
export {
  Tokenizer,
  byteSpanToTokens,
  utf8Offset,
  checkEncodable,
  BUILTIN_ENCODINGS,
  MAX_ENCODE_CHARS,
  MAX_RUN_CHARS,
} from './tokenizer/tokenizer.js';
export type { BuiltinEncoding, EncodeOptions, TokenizerInfo } from './tokenizer/tokenizer.js';
export { prunedVocab, prunedTokenizer, parsePrunedVocab, PRUNED_FILE } from './tokenizer/pruned.js';
export type { PrunedVocab } from './tokenizer/pruned.js';
export { parseRanks } from './tokenizer/ranks.js';
export type { BaseRanks } from './tokenizer/ranks.js';
export { ChatTemplate, plainChatTemplate, chatmlTemplate } from './tokenizer/chat.js';
export type { ChatMessage, ChatRenderOptions, ChatTemplateOptions, ApplyChatTemplate } from './tokenizer/chat.js';
export { completionLogprobs, packSequences } from './sequences.js';
export type { SequenceRow, PackedSequences } from './sequences.js';
export { paramLayout } from './workers/layout.js';
export { splitRollouts } from './workers/split.js';
export type { ParamLayout, ParamSlot } from './workers/layout.js';
