/**
 * The ~10M-parameter benchmark model of the policy issue (hidden 256, 6 layers, 8 heads,
 * vocab 4096), shared by the policy, saliency and rollout benchmarks.
 */
export const BENCH_CONFIG = {
  model_type: 'qwen3',
  vocab_size: 4096,
  hidden_size: 256,
  intermediate_size: 1280,
  num_hidden_layers: 6,
  num_attention_heads: 8,
  num_key_value_heads: 4,
  head_dim: 32,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  max_position_embeddings: 1024,
  tie_word_embeddings: false,
};
