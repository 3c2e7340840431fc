import { existsSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PRUNED_FILE, Qwen3Model, parseModelConfig, savePrunedVocab, saveModel, selectBackend } from '@rlvr/policy';
import { AdamW, learningRate } from '@rlvr/trainer';
import { METRIC, appendJsonl, createDirectory, writeFileAtomic } from '@rlvr/core';
import { ReferenceTrainerError } from '../errors.js';
import { RUN_FILES } from '@rlvr/report';
import type { PretrainConfig } from './config.js';
import { SyntheticCorpus } from '@rlvr/rollout';
import { taskGenerator } from '@rlvr/tasks';
import { greedyEval } from '@rlvr/eval';
import type { GreedyEval } from '@rlvr/eval';
import { packSft, sftStep } from '@rlvr/trainer';

/** Where progress goes (the CLI prints it on stderr; library code never prints). */
export interface PretrainLogger {
  info(message: string): void;
  warn?(message: string): void;
}

/** The checkpoint directory inside the run directory: `config.json`, `model.safetensors`, `tokenizer.pruned.json`. */
export const CHECKPOINT_DIR = 'checkpoint';

export interface PretrainSummary {
  outDir: string;
  checkpointDir: string;
  parameters: number;
  vocabSize: number;
  steps: number;
  /** completion tokens (the ones with loss) and all tokens, per second of wall time in training steps */
  completionTokensPerS: number;
  tokensPerS: number;
  /** seconds in training steps (wall and this process's CPU), and in evaluation */
  trainWallS: number;
  trainCpuS: number;
  evalWallS: number;
  finalLoss: number;
  evals: (GreedyEval & { step: number })[];
  checkpointBytes: number;
}

/**
 * Supervised warm-up of a tiny Qwen3 policy on synthetic worked solutions (the embedded default's
 * first half): cross-entropy on completion tokens only, AdamW, greedy held-out accuracy every
 * `eval.every` steps. Writes the run directory:
 *
 * ```
 * OUT/config.json     the resolved config, with the vocabulary size and parameter count
 * OUT/metrics.jsonl   per step: loss/sft, lr, grad_norm, tokens_per_s; accuracy on eval steps
 * OUT/checkpoint/     config.json, model.safetensors, tokenizer.pruned.json (loadModel / loadTokenizer)
 * ```
 *
 * Refuses an OUT that already holds a metrics.jsonl or a checkpoint/. Same config and seed, same backend: same weights.
 */
export async function runPretrain(
  config: PretrainConfig,
  outDir: string,
  logger: PretrainLogger = { info() {} },
): Promise<PretrainSummary> {
  // its log or its trained policy (the log deleted): either is a run that starting over would erase
  const taken = [RUN_FILES.metrics, CHECKPOINT_DIR].find((f) => existsSync(join(outDir, f)));
  if (taken !== undefined) {
    throw new ReferenceTrainerError(
      'invalid_options',
      `${join(outDir, taken)} exists: pick another --out (a run directory is never overwritten)`,
      { file: outDir },
    );
  }
  await createDirectory(outDir);
  await selectBackend({ backend: config.backend }, logger);

  const longChain = config.family === 'long-chain' ? taskGenerator('long-chain', config.longChain) : undefined;
  const corpus = new SyntheticCorpus(
    config.seed,
    longChain ?? config.synthetic,
    { seed: config.eval.seed, problems: config.eval.problems, options: longChain ?? config.eval.synthetic ?? config.synthetic },
    config.vocabProblems,
  );
  const heldOut = corpus.heldOut.map((t) => corpus.encode(t));
  const modelConfig = parseModelConfig({
    ...config.model,
    vocab_size: corpus.tokenizer.vocabSize,
    bos_token_id: corpus.eosId,
    eos_token_id: corpus.eosId,
  });
  // drawn on the host from a seeded Rng: the same weights for a seed on every backend
  const model = Qwen3Model.random(modelConfig, config.seed);
  const parameters = model.numParameters();
  logger.info(
    `model: ${parameters.toLocaleString('en')} parameters, vocabulary ${corpus.tokenizer.vocabSize} (pruned cl100k_base), ${config.model.num_hidden_layers} layers x ${config.model.hidden_size}`,
  );
  await writeFileAtomic(
    join(outDir, RUN_FILES.config),
    JSON.stringify({ command: 'pretrain', ...config, derived: { vocab_size: corpus.tokenizer.vocabSize, parameters } }, null, 2) + '\n',
  );

  const optimizer = new AdamW(config.optimizer);
  const metricsFile = join(outDir, RUN_FILES.metrics);
  const evals: PretrainSummary['evals'] = [];
  let trainWallS = 0;
  let trainCpuS = 0;
  let evalWallS = 0;
  let tokens = 0;
  let completionTokens = 0;
  let finalLoss = Number.NaN;
  const evaluate = async (step: number): Promise<GreedyEval> => {
    const t0 = performance.now();
    const e = await greedyEval(model, corpus.tokenizer, heldOut, {
      maxNewTokens: config.eval.maxNewTokens,
      batchSize: config.eval.batchSize,
      eosId: corpus.eosId,
    });
    evalWallS += (performance.now() - t0) / 1000;
    evals.push({ step, ...e });
    logger.info(
      `eval step ${step}: accuracy ${(100 * e.accuracy).toFixed(1)}% (${e.correct}/${e.problems}), ${(100 * e.finished).toFixed(0)}% finished, ${e.meanTokens.toFixed(1)} tokens; e.g. ${JSON.stringify(e.examples[0]?.completion ?? '')}`,
    );
    return e;
  };

  try {
    for (let step = 0; step < config.steps; step++) {
      const lr = learningRate(config.schedule, step);
      const packed = packSft(corpus.nextBatch(config.batchSize), corpus.eosId);
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      const r = await sftStep(model, optimizer, packed, lr, config.maxGradNorm);
      const dt = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(c0);
      trainWallS += dt;
      trainCpuS += (cpu.user + cpu.system) / 1e6;
      const stepTokens = packed.mask.reduce((a, b) => a + b, 0);
      tokens += stepTokens;
      completionTokens += packed.completionTokens;
      finalLoss = r.loss;
      const record: Record<string, number | null> = {
        step: step + 1,
        [METRIC.lossSft]: r.loss,
        [METRIC.lr]: lr,
        [METRIC.gradNorm]: r.gradNorm,
        [METRIC.tokensPerS]: stepTokens / dt,
        [METRIC.skippedUpdates]: r.applied ? 0 : 1,
      };
      const last = step + 1 === config.steps;
      if (last || (config.eval.every > 0 && (step + 1) % config.eval.every === 0)) {
        const e = await evaluate(step + 1);
        record[METRIC.accuracy] = e.accuracy;
        record[METRIC.evalFinished] = e.finished;
        record[METRIC.evalMeanTokens] = e.meanTokens;
      }
      await appendJsonl(metricsFile, [record]);
      if (config.logEvery > 0 && ((step + 1) % config.logEvery === 0 || last)) {
        logger.info(
          `step ${step + 1}/${config.steps}: loss ${r.loss.toFixed(4)}, lr ${lr.toExponential(2)}, grad_norm ${r.gradNorm.toFixed(3)}, ${Math.round(tokens / trainWallS)} tokens/s, ${trainWallS.toFixed(0)} s`,
        );
      }
    }
    const checkpointDir = join(outDir, CHECKPOINT_DIR);
    await mkdir(checkpointDir, { recursive: true });
    await saveModel(model, checkpointDir, { dtype: config.dtype });
    savePrunedVocab(join(checkpointDir, PRUNED_FILE), corpus.vocab);
    let checkpointBytes = 0;
    for (const f of ['config.json', 'model.safetensors', PRUNED_FILE]) checkpointBytes += (await stat(join(checkpointDir, f))).size;
    logger.info(`wrote ${checkpointDir} (${(checkpointBytes / 1e6).toFixed(2)} MB)`);
    return {
      outDir,
      checkpointDir,
      parameters,
      vocabSize: corpus.tokenizer.vocabSize,
      steps: config.steps,
      completionTokensPerS: completionTokens / trainWallS,
      tokensPerS: tokens / trainWallS,
      trainWallS,
      trainCpuS,
      evalWallS,
      finalLoss,
      evals,
      checkpointBytes,
    };
  } finally {
    optimizer.dispose();
    model.dispose();
  }
}
