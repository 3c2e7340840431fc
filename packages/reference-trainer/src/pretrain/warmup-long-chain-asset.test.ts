import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { greedyEval } from '@rlvr/eval';
import { loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import { promptBuilder } from '@rlvr/rollout';
import { labelCompletion, longChainGenerator } from '@rlvr/tasks';
import { beforeAll, describe, expect, test } from 'vitest';
import { parsePretrainConfig } from './config.js';

// The committed long-chain warm-ups (README: "The committed long-chain warm-ups"), made by rlvr pretrain from run/config.json:
// one trajectory stopped at 880 steps (the credit maps' policy) and at 960 (the main job's).
const ASSETS = [
  // greedy: 17 of the first 32 held-out chains (53.1%, deterministic on wasm); the band says "about half"
  { name: 'warmup-long-chain', steps: 880, accuracy: [0.3, 0.8], minFormatted: 32 },
  // greedy: 23 of the first 32 (71.9%, deterministic on wasm); the band says "most, not all". One chain of the 32 gets a
  // ninth, garbled line (`5 22 * 2 = 6 4`): the format is not perfect yet
  { name: 'warmup-long-chain-960', steps: 960, accuracy: [0.6, 0.97], minFormatted: 31 },
] as const;
const EXPECTED_PARAMETERS = 349_584;

beforeAll(async () => {
  await selectBackend({ backend: 'wasm' });
});

describe.each(ASSETS)('assets/$name', ({ name, steps, accuracy, minFormatted }) => {
  const DIR = fileURLToPath(new URL(`../../assets/${name}`, import.meta.url));
  test("is its run's long-chain checkpoint, and greedy-decodes held-out chains line by line, within its band", async () => {
    const { command, derived: _derived, ...recorded } = JSON.parse(readFileSync(`${DIR}/run/config.json`, 'utf8'));
    expect(command).toBe('pretrain');
    const run = parsePretrainConfig(recorded);
    expect(run.family).toBe('long-chain');
    // one trajectory: the same pretrain config (docs/examples/pretrain-long-chain.json's), stopped at `steps`
    expect(run.steps).toBe(steps);
    const { steps: _s, ...shared } = recorded;
    const {
      steps: _t,
      command: _c,
      derived: _d,
      ...first
    } = JSON.parse(readFileSync(fileURLToPath(new URL('../../assets/warmup-long-chain/run/config.json', import.meta.url)), 'utf8'));
    expect(shared).toEqual(first);
    // ... and the same steps: the training loss of every step both recorded is the same number
    const losses = (dir: string) =>
      readFileSync(`${dir}/run/metrics.jsonl`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)['loss/sft'] as number);
    const ours = losses(DIR);
    expect(ours).toHaveLength(steps);
    expect(ours.slice(0, 880)).toEqual(losses(fileURLToPath(new URL('../../assets/warmup-long-chain', import.meta.url))));
    const model = loadModel(DIR);
    const tok = loadTokenizer(DIR);
    expect(model.numParameters()).toBe(EXPECTED_PARAMETERS);
    expect(tok.vocabSize).toBe(model.config.vocab_size);
    expect(model.config.max_position_embeddings).toBe(run.model.max_position_embeddings);
    const gen = longChainGenerator(run.longChain);
    const problems = gen.tasks(run.eval.seed, 32);
    const prompts = promptBuilder();
    const tasks = problems.map((t) => ({
      question: t.question,
      answer: t.answer,
      prompt: tok.encode(prompts.text(t.question), { allowSpecial: false }),
      completion: [],
    }));
    const e = await greedyEval(model, tok, tasks, {
      maxNewTokens: run.eval.maxNewTokens,
      batchSize: 32,
      eosId: model.config.eos_token_id as number,
      examples: 32,
    });
    expect(e.finished).toBe(1);
    // deterministic on wasm: the README gives the figures of 128 problems; these are the first 32
    expect(e.accuracy).toBeGreaterThan(accuracy[0]);
    expect(e.accuracy).toBeLessThan(accuracy[1]);
    // one checkable line per step, then the box, on (nearly) every chain: the labeller reads those, and a chain it finds
    // right the verifier accepts
    const LINES = /^(?:\d(?: \d)* [-+*/] \d(?: \d)* = \d(?: \d)*\n){4,8}\\boxed\{\d+\}$/;
    let formatted = 0;
    for (const [i, ex] of e.examples.entries()) {
      if (!LINES.test(ex.completion)) continue;
      formatted++;
      const label = labelCompletion(problems[i]!.chain, ex.completion);
      expect(label.kind, `problem ${i}`).not.toBe('unlabelled');
      if (label.kind === 'correct') expect(ex.correct, `problem ${i}`).toBe(true);
    }
    expect(formatted).toBeGreaterThanOrEqual(minFormatted);
    model.dispose();
  }, 600_000);
});
