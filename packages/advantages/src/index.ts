export * from './browser.js';
export { advantagesCommand } from './cli/command.js';
