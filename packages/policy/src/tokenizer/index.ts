/**
 * `@rlvr/policy/tokenizer`: the tokenizers and chat templates without the model, so that code which
 * only encodes, decodes or renders prompts (span location, HTTP samplers, data tools) loads no
 * TensorFlow.js. Everything here is also exported from `@rlvr/policy`.
 */
export {
  Tokenizer,
  byteSpanToTokens,
  utf8Offset,
  checkEncodable,
  BUILTIN_ENCODINGS,
  MAX_ENCODE_CHARS,
  MAX_RUN_CHARS,
} from './tokenizer.js';
export type { BuiltinEncoding, EncodeOptions, TokenizerInfo } from './tokenizer.js';
export { loadHfTokenizer, hfToTiktoken } from './hf.js';
export type { TiktokenParts } from './hf.js';
export { prunedVocab, prunedTokenizer, parsePrunedVocab, PRUNED_FILE } from './pruned.js';
export { savePrunedVocab, loadPrunedVocab } from './pruned-file.js';
export { parseRanks } from './ranks.js';
export type { BaseRanks } from './ranks.js';
export type { PrunedVocab } from './pruned.js';
export { loadTokenizer, tokenizerKinds } from './load.js';
export type { TokenizerKind } from './load.js';
export { ChatTemplate, plainChatTemplate, chatmlTemplate } from './chat.js';
export type { ChatMessage, ChatRenderOptions, ChatTemplateOptions, ApplyChatTemplate } from './chat.js';
