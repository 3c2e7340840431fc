export * from './browser.js';
export { CheckpointStore } from './checkpoint-store.js';
export type { CheckpointMeta } from './checkpoint-store.js';
export { configHash, configDiff, canonicalJson } from './config-hash.js';
