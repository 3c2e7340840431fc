import { z } from 'zod';
import { parseConfig } from '@rlvr/core';
import { plainChatTemplate, type ApplyChatTemplate, type ChatMessage } from '@rlvr/policy/tokenizer';

/**
 * The instruction appended to every question. The backslash is a real backslash:
 * the GRAIL reference code writes this in a non-raw Python string, so its models
 * see U+0008 (backspace) + "oxed{}" instead (grail-reference.md §6.9). We do not
 * replicate that; pass `instruction` to reproduce it on purpose.
 */
export const BOXED_INSTRUCTION = 'Please reason step by step, and put your final answer within \\boxed{}.';

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
