// Throwaway: how long one GRAIL RL step takes with the warm-up checkpoint on this machine.
//   node tools/bench/reference-trainer/rl-step.mjs CHECKPOINT_DIR [PROMPTS=4] [G=8] [STEPS=3]
// One step = sample G completions per prompt (policy sampler, KV cache, T=1) -> math-verify
// rewards -> fused old log-probs + grad x embedding saliency -> grail advantages -> trainer step.
// Needs the packages built (npx tsc -b packages/reference-trainer, which builds its dependencies).
import { Signals, SIGNAL_NAMES } from '@rlvr/core';
import { mathReward } from '@rlvr/math-verify';
import { loadModel, loadTokenizer, selectBackend } from '@rlvr/policy';
import { policySampler, promptBuilder, sampleGroups, syntheticGenerator } from '@rlvr/rollout';
import { logprobsWithGradXEmb } from '@rlvr/saliency';
import { prepareEstimator } from '@rlvr/advantages';
import { Trainer } from '@rlvr/trainer';

const [dir, P = '4', Gs = '8', S = '3'] = process.argv.slice(2);
if (!dir) throw new Error('usage: rl-step.mjs CHECKPOINT_DIR [PROMPTS] [G] [STEPS]');
const prompts = Number(P), G = Number(Gs), steps = Number(S);
await selectBackend({ backend: 'wasm' });
const model = loadModel(dir);
const tok = loadTokenizer(dir);
const eos = model.config.eos_token_id;
const sampler = policySampler(model, tok, { batchSize: prompts * G, eosTokenIds: [eos], padTokenId: eos });
const gen = syntheticGenerator({ minSteps: 1, maxSteps: 2, digits: 1 });
const pb = promptBuilder();
const grail = prepareEstimator('grail');
const trainer = new Trainer(model, { schedule: { lr: 1e-5 }, epochs: 1 });
const cpuS = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const rows = [];
for (let s = 0; s < steps; s++) {
  const t = { start: performance.now(), cpu: cpuS() };
  const tasks = gen.tasks(99, prompts, s * prompts);
  const lap = {};
  let t0 = performance.now();
  const { batch, texts } = await sampleGroups(tasks.map((x) => ({ tokens: tok.encode(pb.text(x.question), { allowSpecial: false }) })), sampler, { groupSize: G, temperature: 1, maxNewTokens: 64, seed: s });
  lap.sample = (performance.now() - t0) / 1000; t0 = performance.now();
  texts.forEach((text, i) => { batch.rewards[i] = mathReward(text, tasks[Math.floor(i / G)].answer).reward; });
  lap.verify = (performance.now() - t0) / 1000; t0 = performance.now();
  const fused = logprobsWithGradXEmb(model, batch);
  lap.saliency = (performance.now() - t0) / 1000; t0 = performance.now();
  const signals = new Signals(fused.scores.length, { [SIGNAL_NAMES.gradXEmb]: fused.scores });
  const { advantages } = grail.estimate(batch, signals);
  lap.advantages = (performance.now() - t0) / 1000; t0 = performance.now();
  const { metrics } = trainer.step(batch, advantages, { oldLogprobs: fused.logprobs });
  lap.train = (performance.now() - t0) / 1000;
  const total = (performance.now() - t.start) / 1000;
  const row = { step: s, total_s: +total.toFixed(2), cpu_s: +(cpuS() - t.cpu).toFixed(2), ...Object.fromEntries(Object.entries(lap).map(([k, v]) => [k + '_s', +v.toFixed(3)])), rollouts: batch.numRollouts, completion_tokens: fused.scores.length, 'reward/mean': metrics['reward/mean'] };
  rows.push(row);
  console.log(JSON.stringify(row));
}
const mean = rows.slice(1).reduce((a, r) => a + r.total_s, 0) / Math.max(rows.length - 1, 1);
console.log(JSON.stringify({ seconds_per_step_after_first: +mean.toFixed(2), steps_in_15_min: Math.floor(900 / mean) }));
