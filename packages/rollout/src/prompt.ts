import { z } from 'zod';
import { parseConfig } from '@rlvr/core';

/**
 * The instruction appended to every question. The backslash is a real backslash:
 * the GRAIL reference code writes this in a non-raw Python string, so its models
 * see U+0008 (backspace) + "oxed{}" instead (grail-reference.md §6.9). We do not
 * replicate that; pass `instruction` to reproduce it on purpose.
 */
export const BOXED_INSTRUCTION = 'Please reason step by step, and put your final answer within \\boxed{}.';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatTemplateOptions {
  /** End with the header of an assistant turn, so the model writes the answer next. */
  addGenerationPrompt: boolean;
  /** Qwen3's switch: false renders an empty think block, so the model answers directly. */
  enableThinking: boolean;
}

/**
 * Renders a conversation into the prompt text a model was trained on. A tokenizer
 * supplies its own (`@rlvr/policy` renders Qwen3's); `plainChatTemplate` and
 * `chatmlTemplate` are built in.
 */
export type ApplyChatTemplate = (messages: readonly ChatMessage[], options: ChatTemplateOptions) => string;

/**
 * The fallback for models without a chat template (a tiny model trained from
 * scratch): `User: ...` / `Assistant: ...` blocks, one blank line apart, ending
 * with `Assistant:` and a newline.
 */
export const plainChatTemplate: ApplyChatTemplate = (messages, { addGenerationPrompt }) => {
  const label = { system: 'System', user: 'User', assistant: 'Assistant' } as const;
  const blocks = messages.map((m) => `${label[m.role]}: ${m.content}`);
  if (addGenerationPrompt) blocks.push('Assistant:\n');
  return blocks.join('\n\n');
};

/**
 * ChatML, as Qwen2.5/Qwen3 render a plain conversation (no tools, no images):
 * `<|im_start|>role\ncontent<|im_end|>\n` per message, then `<|im_start|>assistant\n`,
 * followed by an empty think block when `enableThinking` is false (Qwen3). For
 * text prompts to `/v1/completions` servers; a server's own `/v1/chat/completions`
 * applies the model's template itself.
 */
export const chatmlTemplate: ApplyChatTemplate = (messages, { addGenerationPrompt, enableThinking }) => {
  let s = '';
  for (const m of messages) s += `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
  if (addGenerationPrompt) s += '<|im_start|>assistant\n' + (enableThinking ? '' : '<think>\n\n</think>\n\n');
  return s;
};

export const PromptOptionsSchema = z
  .object({
    /** appended to the question */
    instruction: z.string().default(BOXED_INSTRUCTION),
    /** between the question and the instruction (the reference code uses one space) */
    separator: z.string().default(' '),
    /** an optional system message */
    system: z.string().optional(),
    /** passed to the chat template (the reference evaluates and trains with it off) */
    enableThinking: z.boolean().default(false),
  })
  .strict();
export type PromptOptions = z.output<typeof PromptOptionsSchema>;
export type PromptOptionsInput = z.input<typeof PromptOptionsSchema>;

/** Prompt building with options parsed once: bad options throw `CoreError('invalid_config')` here. */
export interface PromptBuilder {
  readonly options: PromptOptions;
  /** The conversation for a question: optional system message, then the user turn `question + separator + instruction`. */
  messages(question: string): ChatMessage[];
  /** The prompt text: the messages through the chat template, with the generation prompt. */
  text(question: string): string;
}

/** A prompt builder over a chat template (default: `plainChatTemplate`). */
export function promptBuilder(options: PromptOptionsInput = {}, applyChatTemplate: ApplyChatTemplate = plainChatTemplate): PromptBuilder {
  const opts = parseConfig(PromptOptionsSchema, options, 'prompt');
  const messages = (question: string): ChatMessage[] => {
    const user: ChatMessage = { role: 'user', content: opts.instruction === '' ? question : question + opts.separator + opts.instruction };
    return opts.system === undefined ? [user] : [{ role: 'system', content: opts.system }, user];
  };
  return {
    options: opts,
    messages,
    text: (question) => applyChatTemplate(messages(question), { addGenerationPrompt: true, enableThinking: opts.enableThinking }),
  };
}
