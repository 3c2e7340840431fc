export * from './browser.js';
export {
  SafetensorsFile,
  CheckpointReader,
  writeSafetensors,
  writeCheckpointWeights,
  floatToBf16,
  floatToHalf,
  INDEX_FILE,
  SINGLE_FILE,
} from './safetensors.js';
export { loadModel, saveModel, readModelConfig, CONFIG_FILE } from './checkpoint.js';
export type { SaveOptions } from './checkpoint.js';
export { selectBackend, BACKEND_NAMES, BACKEND_ENV, BackendOptionsSchema } from './backend.js';
export { loadHfTokenizer, hfToTiktoken } from './tokenizer/index.js';
export type { TiktokenParts } from './tokenizer/index.js';
export { savePrunedVocab, loadPrunedVocab } from './tokenizer/index.js';
export { loadTokenizer, tokenizerKinds } from './tokenizer/index.js';
export type { TokenizerKind } from './tokenizer/index.js';
export { openPolicyDir, modelChatTemplate, defaultEosTokenIds, TOKENIZER_CONFIG_FILE } from './model-dir.js';
export { exportModelDir } from './export-dir.js';
export type { OpenPolicyDirOptions, PolicyDir, ModelChatTemplate } from './model-dir.js';
export { policyCommands, policyInfoCommand, policyLogprobsCommand } from './commands.js';
export { PolicyWorkers, compiledModuleUrl } from './workers/engine.js';
export type { PolicyWorkersOptions, RunTiming } from './workers/engine.js';
export type { WorkerContext, WorkerTask } from './workers/protocol.js';
