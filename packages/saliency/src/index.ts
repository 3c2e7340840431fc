export * from './browser.js';
export { computeSignalsOnWorkers, refreshSignalsOnWorkers } from './signals-workers.js';
export { saliencyCommand, methods as saliencyMethods } from './command.js';
