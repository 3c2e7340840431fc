// Writes rollouts.jsonl: three groups of four short completions with GRAIL-like
// raw saliency (log-normal, larger on the tokens that lead to the answer) and
// answer spans. Deterministic. Run: node packages/advantages/examples/make-rollouts.mjs
import { writeFileSync, renameSync } from 'node:fs';

let seed = 12345;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const normal = () => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());

/** length tokens; the answer `\boxed{` (2 tokens), content, `}` (1 token), then EOS. */
function rollout(group, reward, length, contentLen, answered = true) {
  const saliency = [];
  const closeEnd = length - 1; // EOS follows the close brace
  const contentStart = closeEnd - 1 - contentLen;
  const openStart = contentStart - 2;
  for (let t = 0; t < length; t++) {
    const nearAnswer = answered && t >= openStart - 4 && t < closeEnd ? 1.5 : 0;
    saliency.push(+Math.exp(-4 + nearAnswer + 1.2 * normal()).toPrecision(4));
  }
  const spans = answered
    ? { open: [openStart, contentStart], content: [contentStart, closeEnd - 1], close: [closeEnd - 1, closeEnd] }
    : null;
  return { group, reward, length, saliency, spans };
}

const rows = [
  rollout('q1', 1, 18, 1),
  rollout('q1', 0, 22, 2),
  rollout('q1', 1, 16, 1),
  rollout('q1', 0, 24, 3),
  rollout('q2', 0, 20, 2),
  rollout('q2', 0, 14, 1),
  rollout('q2', 0, 12, 0, false),
  rollout('q2', 0, 19, 2),
  rollout('q3', 1, 21, 2),
  rollout('q3', 0, 12, 0, false),
  rollout('q3', 0, 17, 1),
  rollout('q3', 0, 15, 1),
];
const out = new URL('./rollouts.jsonl', import.meta.url);
writeFileSync(out.pathname + '.tmp', rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
renameSync(out.pathname + '.tmp', out.pathname);
