import { describe, expect, it } from 'vitest';
import { CoreError } from '@rlvr/core';
import { chatmlTemplate, plainChatTemplate, type ApplyChatTemplate } from '@rlvr/policy';
import { BOXED_INSTRUCTION, promptBuilder } from './prompt.js';

describe('BOXED_INSTRUCTION', () => {
  it('holds a real backslash before "boxed{}" and no backspace (U+0008)', () => {
    expect(BOXED_INSTRUCTION).toHaveLength(70);
    const at = BOXED_INSTRUCTION.indexOf('boxed{}');
    expect(BOXED_INSTRUCTION.charCodeAt(at - 1)).toBe(0x5c);
    expect(BOXED_INSTRUCTION.includes('\u0008')).toBe(false);
    expect(Buffer.from(BOXED_INSTRUCTION, 'utf8').toString('hex')).toContain('5c626f7865647b7d2e'); // "\boxed{}."
    expect(BOXED_INSTRUCTION).toBe(String.raw`Please reason step by step, and put your final answer within \boxed{}.`);
  });
});

describe('promptBuilder', () => {
  it('appends the instruction to the question with one space, through the plain template by default', () => {
    const p = promptBuilder();
    expect(p.messages('What is 2+3?')).toEqual([{ role: 'user', content: 'What is 2+3? ' + BOXED_INSTRUCTION }]);
    expect(p.text('What is 2+3?')).toBe(`User: What is 2+3? ${BOXED_INSTRUCTION}\n\nAssistant:\n`);
  });

  it('passes messages and options to an injected chat template', () => {
    const calls: unknown[] = [];
    const tpl: ApplyChatTemplate = (messages, opts) => {
      calls.push({ messages, opts });
      return 'rendered';
    };
    const p = promptBuilder({ system: 'Be brief.', instruction: 'Answer in a box.', separator: '\n' }, tpl);
    expect(p.text('Q')).toBe('rendered');
    expect(calls).toEqual([
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Q\nAnswer in a box.' },
        ],
        opts: { addGenerationPrompt: true, enableThinking: false },
      },
    ]);
    expect(promptBuilder({ instruction: '' }).messages('Q')).toEqual([{ role: 'user', content: 'Q' }]);
  });

  it('renders ChatML the way Qwen3 renders a plain conversation', () => {
    const msgs = promptBuilder({ system: 'S' }).messages('Q');
    expect(chatmlTemplate(msgs, { addGenerationPrompt: true, enableThinking: false })).toBe(
      `<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ ${BOXED_INSTRUCTION}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n`,
    );
    expect(chatmlTemplate(msgs.slice(1), { addGenerationPrompt: true, enableThinking: true })).toBe(
      `<|im_start|>user\nQ ${BOXED_INSTRUCTION}<|im_end|>\n<|im_start|>assistant\n`,
    );
    expect(plainChatTemplate([{ role: 'assistant', content: 'A' }], { addGenerationPrompt: false, enableThinking: false })).toBe(
      'Assistant: A',
    );
  });

  it('rejects bad options', () => {
    expect(() => promptBuilder({ enableThinking: 'no' as unknown as boolean })).toThrow(CoreError);
    expect(() => promptBuilder({ temperature: 1 } as never)).toThrow(/unknown key: temperature/);
  });
});
