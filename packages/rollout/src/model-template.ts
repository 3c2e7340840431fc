import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ChatTemplate, type Tokenizer } from '@rlvr/policy';
import { chatmlTemplate, type ApplyChatTemplate } from './prompt.js';

/** A model directory's chat template and where it came from. */
export interface ModelChatTemplate {
  /** undefined when the model has none */
  apply: ApplyChatTemplate | undefined;
  source: 'tokenizer_config.json' | 'chatml' | 'none';
}

/**
 * The chat template of a model directory: `tokenizer_config.json`'s `chat_template` when the
 * directory has one; else ChatML when the tokenizer has `<|im_start|>` and `<|im_end|>`
 * (Qwen-style models); else none.
 */
export function modelChatTemplate(dir: string, tokenizer: Tokenizer): ModelChatTemplate {
  const file = join(dir, 'tokenizer_config.json');
  if (existsSync(file)) {
    const t = ChatTemplate.fromTokenizerConfig(file);
    return { apply: (messages, o) => t.render([...messages], { addGenerationPrompt: o.addGenerationPrompt, enableThinking: o.enableThinking }), source: 'tokenizer_config.json' };
  }
  if (tokenizer.specialId('<|im_start|>') !== undefined && tokenizer.specialId('<|im_end|>') !== undefined) return { apply: chatmlTemplate, source: 'chatml' };
  return { apply: undefined, source: 'none' };
}
