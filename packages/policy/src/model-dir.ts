/**
 * Opening a model directory as every command that runs a policy needs it (`rlvr train`, `rlvr eval`,
 * `rlvr-serve`): the model, its tokenizer, its chat template and the ids that end a completion,
 * each chosen by one rule, with the model freed again when anything after it fails.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_FILE, loadModel } from './checkpoint.js';
import type { LoadOptions } from './model-bytes.js';
import type { ModelConfig } from './config.js';
import { PolicyError } from './errors.js';
import type { Qwen3Model } from './model.js';
import { ChatTemplate, chatmlTemplate, type ApplyChatTemplate } from './tokenizer/chat.js';
import { loadTokenizer } from './tokenizer/load.js';
import type { Tokenizer } from './tokenizer/tokenizer.js';

/** The file whose `chat_template` a model directory's chat template is read from (Hugging Face's). */
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';

/** A model directory's chat template and where it came from. */
export interface ModelChatTemplate {
  /** undefined when the model has none */
  apply: ApplyChatTemplate | undefined;
  source: 'tokenizer_config.json' | 'chatml' | 'none';
}

/**
 * The chat template of a model directory: `tokenizer_config.json`'s `chat_template` when the
 * directory has that file; else ChatML when the tokenizer has `<|im_start|>` and `<|im_end|>`
 * (Qwen-style models); else none (the caller picks a fallback, e.g. `plainChatTemplate`).
 * A `tokenizer_config.json` that does not parse, or has no `chat_template`, throws
 * `PolicyError('invalid_tokenizer')` naming the file.
 */
export function modelChatTemplate(dir: string, tokenizer: Tokenizer): ModelChatTemplate {
  const file = join(dir, TOKENIZER_CONFIG_FILE);
  if (existsSync(file)) return { apply: ChatTemplate.fromTokenizerConfig(file).apply, source: 'tokenizer_config.json' };
  if (tokenizer.specialId('<|im_start|>') !== undefined && tokenizer.specialId('<|im_end|>') !== undefined)
    return { apply: chatmlTemplate, source: 'chatml' };
  return { apply: undefined, source: 'none' };
}

/**
 * The ids that end a completion: the config's `eos_token_id` (one id or a list) plus the
 * tokenizer's `<|im_end|>` and `<|endoftext|>` when the model's vocabulary has them; sorted, without
 * repeats. Empty when the model has none of these.
 */
export function defaultEosTokenIds(config: ModelConfig, tokenizer: Tokenizer): number[] {
  const ids = new Set<number>();
  const cfg = config.eos_token_id;
  if (typeof cfg === 'number') ids.add(cfg);
  else if (Array.isArray(cfg)) for (const id of cfg) ids.add(id);
  for (const s of ['<|im_end|>', '<|endoftext|>']) {
    const id = tokenizer.specialId(s);
    if (id !== undefined && id < config.vocab_size) ids.add(id);
  }
  return [...ids].sort((a, b) => a - b);
}

export interface OpenPolicyDirOptions extends LoadOptions {
  /** A tokenizer spec (`loadTokenizer`) instead of the directory's own tokenizer. */
  tokenizer?: string;
  /**
   * Refuse a model whose completions could not end (no `eos_token_id`, no `<|im_end|>` or
   * `<|endoftext|>`): default true. A server may open one anyway and stop at `max_tokens`.
   */
  requireEos?: boolean;
}

/** An opened model directory. Call `dispose()` when done (model tensors, tokenizer wasm memory). */
export interface PolicyDir {
  dir: string;
  model: Qwen3Model;
  tokenizer: Tokenizer;
  /** See `modelChatTemplate`. */
  chatTemplate: ModelChatTemplate;
  /** See `defaultEosTokenIds`; never empty unless `requireEos` is false. */
  eosTokenIds: number[];
  dispose(): void;
}

/**
 * Open a model directory: `config.json` + safetensors (`loadModel`), the tokenizer
 * (`tokenizer.pruned.json`, else `tokenizer.json`, or `options.tokenizer`), the chat template
 * (`modelChatTemplate`) and the EOS ids (`defaultEosTokenIds`). Select the tfjs backend first.
 *
 * Errors are `PolicyError`s naming the file: `invalid_checkpoint` when `dir` is not a directory or
 * has no `config.json`; what `loadModel`, `loadTokenizer` or the chat template throw; and
 * `invalid_config` (at `config.json`, field `eos_token_id`) when `requireEos` finds no EOS id.
 * Nothing stays allocated after an error.
 */
export function openPolicyDir(dir: string, options: OpenPolicyDirOptions = {}): PolicyDir {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new PolicyError('invalid_checkpoint', 'model directory not found (not a directory)', { file: dir });
  if (!existsSync(join(dir, CONFIG_FILE)))
    throw new PolicyError('invalid_checkpoint', `not a model directory (no ${CONFIG_FILE} there)`, { file: dir });
  const model = loadModel(dir, { trainable: options.trainable });
  let tokenizer: Tokenizer | undefined;
  try {
    tokenizer = loadTokenizer(options.tokenizer ?? dir);
    const chatTemplate = modelChatTemplate(dir, tokenizer);
    const eosTokenIds = defaultEosTokenIds(model.config, tokenizer);
    if (eosTokenIds.length === 0 && options.requireEos !== false) {
      throw new PolicyError(
        'invalid_config',
        'eos_token_id: the model has no end-of-sequence token (no eos_token_id here, no <|im_end|> or <|endoftext|> in the tokenizer): completions could not end',
        { file: join(dir, CONFIG_FILE) },
      );
    }
    const t = tokenizer;
    const dispose = (): void => {
      model.dispose();
      t.free();
    };
    return { dir, model, tokenizer: t, chatTemplate, eosTokenIds, dispose };
  } catch (e) {
    model.dispose();
    tokenizer?.free();
    throw e;
  }
}
