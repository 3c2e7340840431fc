/** The shell blocks of docs/benchmarks/*.md (how each figure was measured), run small (see run.ts). */
import { docFiles } from './blocks.js';
import { docTests, ROOT } from './run.js';

docTests(docFiles(ROOT).filter((f) => f.startsWith('docs/benchmarks/')));
