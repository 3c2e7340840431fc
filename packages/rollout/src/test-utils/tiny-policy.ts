/**
 * A tiny real policy for tests: a random `Qwen3Model` (2 layers, hidden 32) over a GPT-2
 * vocabulary pruned to the tokens of some synthetic tasks (plus every byte, so any text
 * encodes), with ChatML special tokens. Random weights make random text, which is all the
 * sampler and server tests need: they compare decoders against each other, not text quality.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  PRUNED_FILE,
  Qwen3Model,
  parseModelConfig,
  prunedTokenizer,
  prunedVocab,
  saveModel,
  savePrunedVocab,
  selectBackend,
  type Tokenizer,
} from '@rlvr/policy';
import { BOXED_INSTRUCTION } from '../data/prompt.js';
import { syntheticGenerator } from '@rlvr/tasks';

const TINY_SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];

export interface TinyPolicy {
  model: Qwen3Model;
  tokenizer: Tokenizer;
  dispose(): void;
}

let backendReady: Promise<unknown> | null = null;
/** The cpu backend (deterministic, always available), once per process. */
export function useCpu(): Promise<unknown> {
  backendReady ??= selectBackend({ backend: 'cpu' });
  return backendReady;
}

function tinyTokenizer(): Tokenizer {
  const gen = syntheticGenerator({ minSteps: 2, maxSteps: 3, digits: 2 });
  const corpus = Array.from({ length: 20 }, (_, i) => gen.task(0, i)).flatMap((t) => [t.question, t.solution]);
  corpus.push(BOXED_INSTRUCTION, 'The answer is \\boxed{42}.', 'user\nassistant\n<think>\n\n</think>\n\n');
  return prunedTokenizer(prunedVocab('gpt2', corpus, TINY_SPECIALS));
}

export async function tinyPolicy(seed = 1, std = 0.3): Promise<TinyPolicy> {
  await useCpu();
  const tokenizer = tinyTokenizer();
  const config = parseModelConfig({
    model_type: 'qwen3',
    vocab_size: tokenizer.vocabSize,
    hidden_size: 32,
    intermediate_size: 64,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 8,
    rope_theta: 10000,
    max_position_embeddings: 256,
    tie_word_embeddings: true,
    eos_token_id: tokenizer.specialId('<|im_end|>'),
  });
  const model = Qwen3Model.random(config, seed, std);
  return {
    model,
    tokenizer,
    dispose: () => {
      model.dispose();
      tokenizer.free();
    },
  };
}

/** Save a tiny policy as a model directory (config, safetensors, pruned vocabulary) in a temp dir. */
export async function tinyModelDir(seed = 1, std = 0.3): Promise<{ dir: string; remove(): void }> {
  const p = await tinyPolicy(seed, std);
  const dir = mkdtempSync(join(tmpdir(), 'rlvr-rollout-model-'));
  await saveModel(p.model, dir);
  const gen = syntheticGenerator({ minSteps: 2, maxSteps: 3, digits: 2 });
  const corpus = Array.from({ length: 20 }, (_, i) => gen.task(0, i)).flatMap((t) => [t.question, t.solution]);
  corpus.push(BOXED_INSTRUCTION, 'The answer is \\boxed{42}.', 'user\nassistant\n<think>\n\n</think>\n\n');
  savePrunedVocab(join(dir, PRUNED_FILE), prunedVocab('gpt2', corpus, TINY_SPECIALS));
  p.dispose();
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
