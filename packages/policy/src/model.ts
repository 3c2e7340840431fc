import * as tf from '@tensorflow/tfjs-core';
import { Rng } from '@rlvr/core';
import { modelDims, parameterShapes } from './config.js';
import type { ModelConfig, ModelDims } from './config.js';
import { PolicyError } from './errors.js';
import { checkBufferLimit } from './webgpu-device.js';
import { tokenLogprobs } from './logprobs.js';
import { linear2d, releaseTranspose } from './ops.js';
import { attention, rmsNorm, rope as applyRotary, swiglu } from './fused.js';
import type { TokenLogprobs, TokenLogprobsOptions } from './logprobs.js';
import type { HostTensor } from './safetensors-format.js';

/**
 * A Qwen3 / Llama decoder in TensorFlow.js, written top to bottom like the Hugging Face code:
 * RMSNorm, grouped-query attention with rotary embeddings (and Qwen3's per-head q/k RMSNorm),
 * SwiGLU MLP, final norm, LM head (tied or not). Parameters are `tf.Variable`s keyed by Hugging
 * Face tensor names, so checkpoints load key by key.
 *
 * Shapes: B batch, T new tokens, S = past + T keys, D hidden, H query heads, KV key/value heads,
 * G = H / KV, hd head size, V vocabulary.
 *
 * Conventions (shared with the PyTorch reference in tools/fixtures/policy):
 * - `attentionMask` `[B, T]`: 1 real token, 0 padding; left or right padding both work;
 * - position ids default to cumsum(mask) - 1 clamped at 0, so a left-padded row sees the same
 *   positions as its unpadded sequence (as in Hugging Face generation);
 * - masked scores get -1e9 added (finite: fully masked pad rows stay finite, never NaN).
 */

const MASK_VALUE = -1e9;

/** Inputs of a forward pass: token ids or input embeddings (exactly one). */
export interface ForwardInput {
  /** `[B, T]` int32 token ids. */
  ids?: tf.Tensor2D;
  /** `[B, T, D]` input embeddings, e.g. the differentiable leaf of a saliency gradient. */
  embeds?: tf.Tensor3D;
  /** `[B, T]` 1 = real token, 0 = padding. Default: all ones. */
  attentionMask?: tf.Tensor2D;
  /** `[B, T]` position ids. Default: cumsum(attentionMask) - 1, clamped at 0. */
  positionIds?: tf.Tensor2D;
  /**
   * Activation checkpointing: keep only each layer's input during the forward pass and recompute
   * the layer in the backward pass (about one extra forward of compute, much less memory: tfjs
   * otherwise keeps every intermediate until backprop ends). Same values and gradients.
   */
  checkpoint?: boolean;
  /**
   * Whether the backward pass computes parameter gradients. Default true (training). `false`
   * (input-only: saliency, gradients w.r.t. `embeds`): every weight of the network is a constant
   * of the custom gradients, so no weight-gradient product or reduction is ever computed and the
   * activations that only they need are not kept. Gradients w.r.t. the input are the same; the
   * parameters then get no gradient (`tf.variableGrads` would see none).
   */
  weightGrad?: boolean;
  /**
   * The keys and values of the columns before these (from `prefix`), `[B, KV, Sp, hd]` per layer:
   * constants of the pass. The input's columns then attend to the prefix as if it stood in the
   * same input, and `attentionMask` / `positionIds` cover the new columns only (positions continue
   * from the prefix's real tokens). What a backward pass that needs the gradients of the later
   * columns only runs on: nothing of the prefix is taped or differentiated.
   */
  past?: KVCache;
}

/** Keys and values of one layer: `[B, KV, S, hd]` each. */
export interface LayerKV {
  k: tf.Tensor4D;
  v: tf.Tensor4D;
}

/**
 * The KV cache of an incremental decode. Owns its tensors: `decodeStep` replaces them and
 * disposes the old ones; call `dispose()` when done.
 */
export class KVCache {
  /** Per layer, keys and values `[B, KV, S, hd]`. */
  layers: LayerKV[];
  /** `[B, S]` float32, 1 where the key is a real token. */
  keyMask: tf.Tensor2D;

  constructor(layers: LayerKV[], keyMask: tf.Tensor2D) {
    this.layers = layers;
    this.keyMask = keyMask;
  }

  /** Cached length S (keys per row, padding included). */
  get length(): number {
    return this.keyMask.shape[1];
  }

  get batchSize(): number {
    return this.keyMask.shape[0];
  }

  dispose(): void {
    for (const l of this.layers) tf.dispose([l.k, l.v]);
    this.keyMask.dispose();
    this.layers = [];
  }
}

let nextModelId = 0;

export class Qwen3Model {
  readonly config: ModelConfig;
  readonly dims: ModelDims;
  /** Parameters keyed by Hugging Face tensor name (`model.layers.0.self_attn.q_proj.weight`). */
  readonly params: Map<string, tf.Variable>;
  private readonly rot: tf.Tensor2D;
  private readonly invFreq: tf.Tensor1D;
  /**
   * Rotary tables `[max_position_embeddings, hd]` (cos, sin; HF layout: the half frequencies repeated),
   * computed on the host, on every backend but cpu and wasm: a GPU's own sin and cos are not exact
   * (Vulkan allows an error of 2^-11, Chromium's SwiftShader is off by 2e-4). cpu and wasm keep the
   * device's sin and cos (exact to float32 rounding there), so that the committed runs stay bit-identical
   * (the host tables move wasm by up to 3.3e-7). Gathered by position; null on cpu and wasm.
   */
  private readonly ropeTables: { cos: tf.Tensor2D; sin: tf.Tensor2D } | null;

  /** Wraps existing variables; use `fromWeights`, `random` or `loadModel` to build one. */
  constructor(config: ModelConfig, params: Map<string, tf.Variable>) {
    this.config = config;
    this.dims = modelDims(config);
    this.params = params;
    const { hd } = this.dims;
    const h = hd / 2;
    // rotate_half(x) = x @ rot, with rotate_half(x) = concat(-x[h:], x[:h]) as in Hugging Face.
    const r = new Float32Array(hd * hd);
    for (let j = 0; j < h; j++) r[(j + h) * hd + j] = -1;
    for (let j = h; j < hd; j++) r[(j - h) * hd + j] = 1;
    this.rot = tf.keep(tf.tensor2d(r, [hd, hd]));
    const inv = new Float32Array(h);
    for (let i = 0; i < h; i++) inv[i] = 1 / config.rope_theta ** ((2 * i) / hd);
    this.invFreq = tf.keep(tf.tensor1d(inv));
    this.ropeTables = ['cpu', 'wasm'].includes(tf.getBackend()) ? null : hostRopeTables(inv, config.max_position_embeddings);
  }

  /**
   * Build from host weights (Hugging Face names). Every expected tensor must be present with its
   * exact shape; the error names the tensor, the expected and the found shape.
   */
  static fromWeights(
    config: ModelConfig,
    get: (name: string) => HostTensor | undefined,
    options: { trainable?: boolean } = {},
  ): Qwen3Model {
    const id = nextModelId++;
    const params = new Map<string, tf.Variable>();
    try {
      for (const [name, shape] of parameterShapes(config)) {
        const t = get(name);
        if (!t) throw new PolicyError('missing_tensor', `missing tensor (expected shape [${shape}])`, { tensor: name });
        if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
          throw new PolicyError('shape_mismatch', `wrong shape: expected [${shape}], found [${t.shape}]`, { tensor: name });
        }
        checkBufferLimit(name, t.data.length);
        const data = t.data instanceof Float32Array ? t.data : Float32Array.from(t.data);
        const init = tf.tensor(data, shape, 'float32');
        params.set(name, tf.variable(init, options.trainable ?? true, `policy${id}/${name}`));
        init.dispose(); // the variable holds its own reference to the data
      }
    } catch (err) {
      for (const v of params.values()) v.dispose();
      throw err;
    }
    return new Qwen3Model(config, params);
  }

  /**
   * A randomly initialised model: RMSNorm weights 1, every other weight N(0, std^2), drawn on the
   * host from `@rlvr/core`'s seeded `Rng` (parameters in checkpoint order, one stream), so a seed
   * gives the same weights on every backend and in every process. (tfjs's `randomNormal` treats
   * seed 0 as unseeded and differs between backends.)
   */
  static random(config: ModelConfig, seed = 0, std = 0.02): Qwen3Model {
    const shapes = parameterShapes(config);
    const rng = new Rng(seed);
    return Qwen3Model.fromWeights(config, (name) => {
      const shape = shapes.get(name)!;
      const size = shape.reduce((a, b) => a * b, 1);
      const data = new Float32Array(size);
      if (name.endsWith('norm.weight')) data.fill(1);
      else for (let k = 0; k < size; k++) data[k] = std * rng.normal();
      return { shape, data };
    });
  }

  /** All parameters, in checkpoint order (for `tf.variableGrads` / optimizers). */
  variables(): tf.Variable[] {
    return [...this.params.values()];
  }

  numParameters(): number {
    let n = 0;
    for (const v of this.params.values()) n += v.size;
    return n;
  }

  /** Host copies of all parameters, keyed by Hugging Face name (for saving). */
  async toHost(): Promise<Map<string, HostTensor>> {
    const out = new Map<string, HostTensor>();
    for (const [name, v] of this.params) out.set(name, { shape: v.shape, data: (await v.data()) as Float32Array });
    return out;
  }

  /** The parameter of a Hugging Face name; throws naming it when absent. */
  param(name: string): tf.Variable {
    const v = this.params.get(name);
    if (!v) throw new PolicyError('missing_tensor', 'parameter not in the model', { tensor: name });
    return v;
  }

  /** `[V, D]`: `lm_head.weight`, or the token embedding when `tie_word_embeddings`. */
  lmHeadWeight(): tf.Tensor2D {
    return (
      this.config.tie_word_embeddings ? this.param('model.embed_tokens.weight') : this.param('lm_head.weight')
    ) as tf.Variable<tf.Rank.R2>;
  }

  /**
   * Token embeddings: ids `[B, T]` -> `[B, T, D]`. Differentiable w.r.t. the embedding table
   * (the gradient is a scatter-add, which both wasm and cpu implement).
   */
  embed(ids: tf.Tensor2D): tf.Tensor3D {
    const [B, T] = ids.shape;
    const { D, V } = this.dims;
    const W = this.param('model.embed_tokens.weight');
    return tf.tidy(() => {
      // The ids are saved for the backward pass (kept by the engine past this tidy).
      const gather = (w: tf.Tensor | tf.GradSaveFunc, save: tf.Tensor | tf.GradSaveFunc) => {
        const idx = tf.cast(tf.reshape(ids, [B * T, 1]), 'int32');
        (save as tf.GradSaveFunc)([idx]);
        return {
          value: tf.gather(w as tf.Tensor, tf.reshape(idx, [B * T])),
          gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.scatterND(saved[0], dy, [V, D]),
        };
      };
      return tf.reshape(tf.customGrad(gather as never)(W) as tf.Tensor, [B, T, D]) as tf.Tensor3D;
    });
  }

  /**
   * Final-normed hidden states `[B, T, D]` from ids or embeddings. The one forward used for
   * training, saliency and scoring (gradients flow through it).
   */
  hidden(input: ForwardInput): tf.Tensor3D {
    return tf.tidy(() => {
      const x = this.inputEmbeds(input);
      const [B, T] = x.shape;
      const mask = (input.attentionMask ? tf.cast(input.attentionMask, 'float32') : tf.ones([B, T])) as tf.Tensor2D;
      const past = input.past;
      if (past) {
        if (past.batchSize !== B) throw new PolicyError('invalid_input', `past holds ${past.batchSize} rows, the input ${B}`);
        const keyMask = tf.concat([past.keyMask, mask], 1) as tf.Tensor2D;
        // cumsum over the whole row, as if the prefix stood in the input: the same positions
        const pos = input.positionIds
          ? (tf.cast(input.positionIds, 'float32') as tf.Tensor2D)
          : tf.slice(positionsFromMask(keyMask), [0, past.length], [B, T]);
        return this.run(x, pos as tf.Tensor2D, keyMask, past.layers, false, input.weightGrad ?? true, past.length + T).h;
      }
      const pos = input.positionIds ? (tf.cast(input.positionIds, 'float32') as tf.Tensor2D) : positionsFromMask(mask);
      return this.run(x, pos, mask, null, input.checkpoint ?? false, input.weightGrad ?? true).h;
    });
  }

  /**
   * Run the first columns of a batch without a gradient and keep their keys and values, for a
   * later `hidden({ ..., past })` over the columns after them. `ids`, `attentionMask` `[B, Tp]`;
   * `width`: the columns of the whole row (prefix + later columns), so that prefix and suffix
   * reproduce the single pass over the row bit for bit (wasm picks its attention kernel by the
   * pass's width). The cache belongs to the caller (`dispose()` it).
   */
  prefix(ids: tf.Tensor2D, attentionMask?: tf.Tensor2D, options: { width?: number } = {}): KVCache {
    const [B, T] = ids.shape;
    let cache: KVCache | undefined;
    tf.tidy(() => {
      const mask = (attentionMask ? tf.cast(attentionMask, 'float32') : tf.ones([B, T])) as tf.Tensor2D;
      const { kv } = this.run(this.embed(ids), positionsFromMask(mask), mask, null, false, true, options.width ?? T);
      cache = new KVCache(
        kv.map((l) => ({ k: tf.keep(l.k), v: tf.keep(l.v) })),
        tf.keep(mask),
      );
    });
    return cache!;
  }

  /** Logits `[B, T, V]` (materialised: for small vocabularies and tests; use `tokenLogprobs` for training). */
  logits(input: ForwardInput): tf.Tensor3D {
    return tf.tidy(() => this.project(this.hidden(input), { weightGrad: input.weightGrad }));
  }

  /**
   * hidden `[B, T, D]` -> logits `[B, T, V]`. `weightGrad: false`: gradients reach `hidden` only
   * (the LM-head weight gradient is never computed).
   */
  project(hidden: tf.Tensor3D, options: { weightGrad?: boolean } = {}): tf.Tensor3D {
    const [B, T, D] = hidden.shape;
    return tf.tidy(
      () =>
        tf.reshape(linear2d(tf.reshape(hidden, [B * T, D]) as tf.Tensor2D, this.lmHeadWeight(), options.weightGrad ?? true), [
          B,
          T,
          this.dims.V,
        ]) as tf.Tensor3D,
    );
  }

  /**
   * log p(targets) and entropy `[B, T]` from hidden states `[B, T, D]`, chunked along T (never a
   * `[B, T, V]` float32 log-softmax). `targets` `[B, T]` int32: the caller shifts (target at t = token at t+1).
   */
  tokenLogprobs(hidden: tf.Tensor3D, targets: tf.Tensor2D, options: TokenLogprobsOptions = {}): TokenLogprobs {
    return tokenLogprobs(hidden, this.lmHeadWeight(), targets, options);
  }

  /**
   * Run a prompt batch and start a KV cache. `ids`, `attentionMask` `[B, T]`; use left padding
   * so that the last column is a real token for every row. Returns the logits of the last column
   * `[B, V]` and the cache (owned by the caller).
   */
  prefill(ids: tf.Tensor2D, attentionMask?: tf.Tensor2D): { logits: tf.Tensor2D; cache: KVCache } {
    const [B, T] = ids.shape;
    let cache: KVCache | undefined;
    const logits = tf.tidy(() => {
      const mask = (attentionMask ? tf.cast(attentionMask, 'float32') : tf.ones([B, T])) as tf.Tensor2D;
      const { h, kv } = this.run(this.embed(ids), positionsFromMask(mask), mask, null);
      const last = tf.slice(h, [0, T - 1, 0], [B, 1, this.dims.D]);
      cache = new KVCache(
        kv.map((l) => ({ k: tf.keep(l.k), v: tf.keep(l.v) })),
        tf.keep(mask),
      );
      return tf.reshape(this.project(last), [B, this.dims.V]) as tf.Tensor2D;
    });
    return { logits, cache: cache! };
  }

  /**
   * One incremental step: ids `[B]` (or `[B, 1]`), appended to `cache` (mutated; old tensors
   * disposed). `stepMask` `[B]` (default ones): 0 marks the new token as padding (e.g. a finished
   * row), so later tokens do not attend to it. Returns next-token logits `[B, V]`.
   */
  decodeStep(cache: KVCache, ids: tf.Tensor, stepMask?: tf.Tensor1D): tf.Tensor2D {
    const B = cache.batchSize;
    if (ids.size !== B) throw new PolicyError('invalid_input', `decodeStep got ${ids.size} ids for a cache of batch ${B}`);
    const old = cache.layers;
    const oldMask = cache.keyMask;
    const logits = tf.tidy(() => {
      const step = tf.reshape(stepMask ? tf.cast(stepMask, 'float32') : tf.ones([B]), [B, 1]);
      const pos = tf.sum(oldMask, 1, true) as tf.Tensor2D; // [B, 1]: real tokens so far = position of the new one
      const keyMask = tf.concat([oldMask, step], 1) as tf.Tensor2D;
      const { h, kv } = this.run(this.embed(tf.reshape(ids, [B, 1]) as tf.Tensor2D), pos, keyMask, old);
      cache.layers = kv.map((l) => ({ k: tf.keep(l.k), v: tf.keep(l.v) }));
      cache.keyMask = tf.keep(keyMask);
      return tf.reshape(this.project(h), [B, this.dims.V]) as tf.Tensor2D;
    });
    for (const l of old) tf.dispose([l.k, l.v]);
    oldMask.dispose();
    return logits;
  }

  dispose(): void {
    for (const v of this.params.values()) {
      releaseTranspose(v);
      v.dispose();
    }
    this.rot.dispose();
    this.invFreq.dispose();
    this.ropeTables?.cos.dispose();
    this.ropeTables?.sin.dispose();
  }

  // ---- the network ----

  private inputEmbeds(input: ForwardInput): tf.Tensor3D {
    if ((input.ids === undefined) === (input.embeds === undefined)) {
      throw new PolicyError('invalid_input', 'forward needs exactly one of ids [B, T] or embeds [B, T, D]');
    }
    if (input.embeds) {
      if (input.embeds.rank !== 3 || input.embeds.shape[2] !== this.dims.D) {
        throw new PolicyError('invalid_input', `embeds must be [B, T, ${this.dims.D}], got [${input.embeds.shape}]`);
      }
    } else if (input.ids!.rank !== 2) {
      throw new PolicyError('invalid_input', `ids must be [B, T], got [${input.ids!.shape}]`);
    }
    const [B, T] = input.embeds ? input.embeds.shape : input.ids!.shape;
    for (const [name, t] of [
      ['attentionMask', input.attentionMask],
      ['positionIds', input.positionIds],
    ] as const) {
      if (t && (t.rank !== 2 || t.shape[0] !== B || t.shape[1] !== T)) {
        throw new PolicyError('invalid_input', `${name} must be [${B}, ${T}] like the input, got [${t.shape}]`);
      }
    }
    const total = T + (input.past?.length ?? 0);
    if (total > this.config.max_position_embeddings) {
      throw new PolicyError(
        'invalid_input',
        `sequence of ${total} tokens exceeds max_position_embeddings ${this.config.max_position_embeddings}`,
      );
    }
    return input.embeds ?? this.embed(input.ids!);
  }

  /**
   * x `[B, T, D]`, positions `[B, T]` float, keyMask `[B, S]` (S = past + T) -> final-normed
   * hidden `[B, T, D]` and every layer's keys/values `[B, KV, S, hd]`.
   */
  private run(
    x: tf.Tensor3D,
    positions: tf.Tensor2D,
    keyMask: tf.Tensor2D,
    past: LayerKV[] | null,
    checkpoint = false,
    weightGrad = true,
    width = x.shape[1],
  ): { h: tf.Tensor3D; kv: LayerKV[] } {
    const [B, T] = x.shape;
    const { L, G, hd } = this.dims;
    const S = keyMask.shape[1];
    const pastLen = S - T;
    // Rotary tables `[B, T, 1, hd]`: the host tables' rows at each position (< max_position_embeddings), or on the device.
    let rope: { cos: tf.Tensor; sin: tf.Tensor };
    if (this.ropeTables !== null) {
      const at = tf.cast(positions, 'int32');
      rope = {
        cos: tf.reshape(tf.gather(this.ropeTables.cos, at), [B, T, 1, hd]),
        sin: tf.reshape(tf.gather(this.ropeTables.sin, at), [B, T, 1, hd]),
      };
    } else {
      const freqs = tf.mul(tf.reshape(positions, [B, T, 1]), this.invFreq); // [B, T, hd/2]
      const emb = tf.reshape(tf.concat([freqs, freqs], 2), [B, T, 1, hd]);
      rope = { cos: tf.cos(emb), sin: tf.sin(emb) };
    }
    // Additive attention bias `[B, 1, G*T, S]`: query t (absolute pastLen + t) sees key s <= it that is real.
    const causal = tf.lessEqual(tf.reshape(tf.range(0, S, 1, 'int32'), [1, S]), tf.reshape(tf.range(pastLen, S, 1, 'int32'), [T, 1])); // [T, S]
    const allowed = tf.logicalAnd(tf.reshape(causal, [1, 1, T, S]), tf.reshape(tf.cast(keyMask, 'bool'), [B, 1, 1, S]));
    let bias: tf.Tensor = tf.where(allowed, tf.zeros([B, 1, T, S]), tf.fill([B, 1, T, S], MASK_VALUE));
    if (G > 1) bias = tf.tile(bias, [1, 1, G, 1]); // rows ordered (g, t), matching the grouped queries
    const kv: LayerKV[] = [];
    let h = x;
    for (let i = 0; i < L; i++) {
      if (checkpoint && !past) {
        h = this.checkpointedBlock(i, h, rope, bias, weightGrad);
        continue;
      }
      const out = this.block(i, h, rope, bias, past ? past[i] : null, weightGrad, width);
      h = out.x;
      kv.push(out.kv);
    }
    return { h: this.rmsNorm(h, 'model.norm.weight', weightGrad), kv };
  }

  /** One decoder layer; `width`: the columns of the whole pass this input is part of (see `attention`). */
  private block(
    i: number,
    x: tf.Tensor3D,
    rope: { cos: tf.Tensor; sin: tf.Tensor },
    bias: tf.Tensor,
    past: LayerKV | null,
    weightGrad = true,
    width = x.shape[1],
  ): { x: tf.Tensor3D; kv: LayerKV } {
    const p = `model.layers.${i}.`;
    const [B, T] = x.shape;
    const { H, KV, G, hd } = this.dims;
    const h = this.rmsNorm(x, p + 'input_layernorm.weight', weightGrad);
    let q: tf.Tensor = tf.reshape(this.linear(h, p + 'self_attn.q_proj.weight', weightGrad), [B, T, H, hd]);
    let k: tf.Tensor = tf.reshape(this.linear(h, p + 'self_attn.k_proj.weight', weightGrad), [B, T, KV, hd]);
    const v = tf.reshape(this.linear(h, p + 'self_attn.v_proj.weight', weightGrad), [B, T, KV, hd]);
    if (this.dims.qkNorm) {
      q = this.rmsNorm(q, p + 'self_attn.q_norm.weight', weightGrad);
      k = this.rmsNorm(k, p + 'self_attn.k_norm.weight', weightGrad);
    }
    q = this.applyRope(q, rope);
    k = this.applyRope(k, rope);
    let kAll = tf.transpose(k, [0, 2, 1, 3]) as tf.Tensor4D; // (B, KV, T, hd)
    let vAll = tf.transpose(v, [0, 2, 1, 3]) as tf.Tensor4D;
    if (past) {
      kAll = tf.concat([past.k, kAll], 2); // (B, KV, S, hd)
      vAll = tf.concat([past.v, vAll], 2);
    }
    // Queries grouped by their KV head: (B, H, T, hd) -> (B, KV, G*T, hd), since head = kv*G + g;
    // so K/V are never repeated.
    const qg = tf.reshape(tf.mul(tf.transpose(q, [0, 2, 1, 3]), 1 / Math.sqrt(hd)), [B, KV, G * T, hd]) as tf.Tensor4D;
    // softmax(q k^T + bias) v: (B, KV, G*T, S) scores, (B, KV, G*T, hd) out -> (B, H, T, hd)
    const y = tf.reshape(attention(qg, kAll, vAll, bias, G * width), [B, H, T, hd]);
    const merged = tf.reshape(tf.transpose(y, [0, 2, 1, 3]), [B, T, H * hd]) as tf.Tensor3D;
    const x1 = tf.add(x, this.linear(merged, p + 'self_attn.o_proj.weight', weightGrad)) as tf.Tensor3D;
    const h2 = this.rmsNorm(x1, p + 'post_attention_layernorm.weight', weightGrad);
    const gate = this.linear(h2, p + 'mlp.gate_proj.weight', weightGrad);
    const up = this.linear(h2, p + 'mlp.up_proj.weight', weightGrad);
    const act = swiglu(gate, up); // silu(gate) * up
    const x2 = tf.add(x1, this.linear(act, p + 'mlp.down_proj.weight', weightGrad)) as tf.Tensor3D;
    return { x: x2, kv: { k: kAll, v: vAll } };
  }

  /**
   * A block whose forward keeps nothing but its input (a custom gradient): the backward pass
   * recomputes the block under a nested tape and differentiates it w.r.t. the input and the
   * block's parameters. Rotary tables and the bias are saved (kept alive), not recomputed.
   */
  private checkpointedBlock(
    i: number,
    x: tf.Tensor3D,
    rope: { cos: tf.Tensor; sin: tf.Tensor },
    bias: tf.Tensor,
    weightGrad = true,
  ): tf.Tensor3D {
    const prefix = `model.layers.${i}.`;
    // Input-only: the block's weights are constants (not inputs of the custom gradient).
    const vars = weightGrad ? [...this.params].filter(([n]) => n.startsWith(prefix)).map(([, v]) => v) : [];
    const f = (...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
      const save = args[args.length - 1] as tf.GradSaveFunc;
      const xx = args[0] as tf.Tensor3D;
      save([xx, rope.cos, rope.sin, bias]);
      return {
        value: this.block(i, xx, rope, bias, null, weightGrad).x,
        gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
          const [sx, cos, sin, b] = saved;
          // The variables in `vars` are the very tensors the block reads, so the nested tape
          // differentiates w.r.t. them.
          return nestedGrads(() => this.block(i, sx as tf.Tensor3D, { cos, sin }, b, null, weightGrad).x, [sx, ...vars], dy);
        },
      };
    };
    return tf.customGrad(f as never)(x, ...vars) as tf.Tensor3D;
  }

  /** x `[..., in]` @ W^T, W `[out, in]` (Hugging Face layout) -> `[..., out]`. */
  private linear<T extends tf.Tensor>(x: T, name: string, weightGrad = true): T {
    const W = this.param(name) as tf.Tensor2D;
    const inDim = x.shape[x.rank - 1];
    const outShape = [...x.shape.slice(0, -1), W.shape[0]];
    return tf.reshape(linear2d(tf.reshape(x, [-1, inDim]) as tf.Tensor2D, W, weightGrad), outShape) as T;
  }

  /** RMSNorm over the last axis: x * rsqrt(mean(x^2) + eps) * w. */
  private rmsNorm<T extends tf.Tensor>(x: T, name: string, weightGrad = true): T {
    return rmsNorm(x, this.param(name), this.config.rms_norm_eps, weightGrad);
  }

  /** x `[B, T, nh, hd]` -> x * cos + rotate_half(x) * sin. */
  private applyRope(x: tf.Tensor, rope: { cos: tf.Tensor; sin: tf.Tensor }): tf.Tensor {
    return applyRotary(x, rope.cos, rope.sin, this.rot);
  }
}

/**
 * `tf.grads` called from inside a backward pass. tfjs keeps one active tape in engine state and a
 * top-level `gradients()` call replaces it and sets it to null when done, which would break the
 * outer backward pass (and leak its saved tensors); so the outer tape is put back afterwards.
 */
function nestedGrads(f: () => tf.Tensor, xs: tf.Tensor[], dy: tf.Tensor): tf.Tensor[] {
  const state = (tf.engine() as unknown as { state: { activeTape: unknown } }).state;
  const outer = state.activeTape;
  try {
    return tf.grads(f)(xs, dy);
  } finally {
    state.activeTape = outer;
  }
}

/** positions `[B, T]` = cumsum(mask) - 1, clamped at 0 (float32). */
export function positionsFromMask(mask: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => tf.relu(tf.sub(tf.cumsum(tf.cast(mask, 'float32'), 1), 1)) as tf.Tensor2D);
}

/** cos and sin `[P, hd]` of angle = float32(position * inv_freq), each rounded once (what the cpu backend computes). */
function hostRopeTables(inv: Float32Array, P: number): { cos: tf.Tensor2D; sin: tf.Tensor2D } {
  const h = inv.length;
  const hd = 2 * h;
  const cos = new Float32Array(P * hd);
  const sin = new Float32Array(P * hd);
  for (let p = 0; p < P; p++) {
    for (let j = 0; j < h; j++) {
      const angle = Math.fround(p * inv[j]!);
      cos[p * hd + j] = cos[p * hd + j + h] = Math.cos(angle);
      sin[p * hd + j] = sin[p * hd + j + h] = Math.sin(angle);
    }
  }
  return { cos: tf.keep(tf.tensor2d(cos, [P, hd])), sin: tf.keep(tf.tensor2d(sin, [P, hd])) };
}
