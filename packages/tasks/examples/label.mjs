// A long-chain problem, a wrong completion, and where it first went wrong (in characters and tokens).
import { Tokenizer } from '@rlvr/policy/tokenizer';
import { OPERATION_SYMBOLS, formatNumber, labelCompletion, labelTokens, longChainGenerator, scaffoldOf } from '@rlvr/tasks';

const task = longChainGenerator().task(0, 1); // seeded: task 1 of stream 0, 4 to 8 steps
console.log(task.question);
console.log(task.solution);

// a completion that miscopies the amount of its second step (6 more than the question says)
const { steps } = task.chain;
const f = (n) => formatNumber(n, true);
const lines = task.solution.split('\n');
lines[1] = `${f(steps[0].result)} ${OPERATION_SYMBOLS[steps[1].op]} ${f(steps[1].operand + 6)} = ${f(steps[1].result)}`;
const wrong = lines.join('\n');
console.log(labelCompletion(task.chain, task.solution)); // { kind: 'correct', ... }
const label = labelCompletion(task.chain, wrong);
console.log(label, JSON.stringify(wrong.slice(...label.span)));

// the same, byte-exact in a tokenizer's tokens (any object with tokenBytes(id) fits)
const tok = Tokenizer.builtin('cl100k_base');
const ids = tok.encode(wrong);
const byTokens = labelTokens(task.chain, ids, tok);
console.log(byTokens.kind, byTokens.tokens, JSON.stringify(tok.decode(ids.slice(...byTokens.tokens))));
tok.free();

// the answer-hidden scaffold (sub-answers are for the reward, never for the prompt)
console.log(scaffoldOf(task.chain, { spacedDigits: true }));
