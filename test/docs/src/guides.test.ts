/** The shell blocks of the README, docs/*.md and every package README, run (see run.ts). */
import { docFiles } from './blocks.js';
import { docTests, ROOT } from './run.js';

docTests(docFiles(ROOT).filter((f) => !f.startsWith('docs/benchmarks/')));
