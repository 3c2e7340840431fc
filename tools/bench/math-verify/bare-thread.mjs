// A worker thread of bench.mjs that grades the corpus in a loop, as the in-process measurement does, for the ms it
// is sent: two of them at once show what two threads can do on this machine with no pool and no messages.
import { parentPort } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import * as api from '../../../packages/math-verify/dist/index.js';
import { loadCorpus, profileFor, runRow } from '../../../packages/math-verify/test/corpus-profile.mjs';

const rows = loadCorpus(fileURLToPath(new URL('../../../packages/math-verify/test/fixtures/math-verify-cases.jsonl', import.meta.url)));
const items = rows.map((row) => ({ row, p: profileFor(row) }));
parentPort.on('message', (ms) => {
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    for (const it of items) runRow(api, it.row, it.p);
    n += items.length;
  }
  parentPort.postMessage({ n, ms: performance.now() - t0 });
});
