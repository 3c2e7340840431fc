import { Qwen3Model, parseModelConfig } from '@rlvr/policy';

/**
 * A tiny random Qwen3 (vocabulary 29, hidden 16, 2 layers) with tied embeddings, as the small Qwen3 models have: W_out
 * is the embedding table in its LM-head use. The same weights every call (seed 7).
 */
export const tinyModel = (): Qwen3Model =>
  Qwen3Model.random(
    parseModelConfig({
      vocab_size: 29,
      hidden_size: 16,
      intermediate_size: 24,
      num_hidden_layers: 2,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      tie_word_embeddings: true,
      max_position_embeddings: 256,
    }),
    7,
    0.3,
  );
