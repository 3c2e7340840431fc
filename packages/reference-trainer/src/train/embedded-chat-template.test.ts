/**
 * The embedded model ships a chat template (assets/warmup/tokenizer_config.json) so that
 * `rlvr-serve` answers chat requests out of the box. `rlvr train` picks the checkpoint's template
 * when it has one, so the template must render exactly the plain User/Assistant layout the
 * embedded default was trained and measured with: its README figures depend on these bytes.
 */
import { describe, expect, test } from 'vitest';
import { loadTokenizer, modelChatTemplate, plainChatTemplate } from '@rlvr/policy';
import { promptBuilder, syntheticGenerator, toPromptTasks } from '@rlvr/rollout';
import { EMBEDDED_CHECKPOINT, HELD_OUT_SEED, parseTrainConfig } from './config.js';

describe("the embedded checkpoint's chat template", () => {
  const tokenizer = loadTokenizer(EMBEDDED_CHECKPOINT);
  const config = parseTrainConfig({});
  const shipped = modelChatTemplate(EMBEDDED_CHECKPOINT, tokenizer);

  test('is the one rlvr train takes for the embedded default', () => {
    expect(config.checkpoint).toBe(EMBEDDED_CHECKPOINT);
    expect(shipped.source).toBe('tokenizer_config.json');
  });

  test('gives rlvr train the prompt bytes and token ids of the plain layout, problem by problem', () => {
    const tasks = syntheticGenerator(config.task).tasks(HELD_OUT_SEED, 64);
    const viaShipped = toPromptTasks(tasks, tokenizer, promptBuilder(config.prompt, shipped.apply!));
    const viaPlain = toPromptTasks(tasks, tokenizer, promptBuilder(config.prompt, plainChatTemplate));
    expect(viaShipped).toEqual(viaPlain);
    const q = tasks[0]!.question;
    expect(promptBuilder(config.prompt, shipped.apply!).text(q)).toBe(
      `User: ${q} Please reason step by step, and put your final answer within \\boxed{}.\n\nAssistant:\n`,
    );
  });

  test('renders every role, a system message, multi-line content and no generation prompt as the plain layout does', () => {
    const messages = [
      { role: 'system' as const, content: 'Be brief.' },
      { role: 'user' as const, content: 'Line one\n\nline two' },
      { role: 'assistant' as const, content: '12 + 30 = 42\n\\boxed{42}' },
      { role: 'tool' as const, content: '{"x": 1}' },
      { role: 'user' as const, content: '' },
    ];
    for (let k = 0; k <= messages.length; k++) {
      for (const addGenerationPrompt of [true, false]) {
        for (const enableThinking of [true, false]) {
          const o = { addGenerationPrompt, enableThinking };
          expect(shipped.apply!(messages.slice(0, k), o)).toBe(plainChatTemplate(messages.slice(0, k), o));
        }
      }
    }
    expect(promptBuilder({ system: 'You are a calculator.' }, shipped.apply!).text('1+1?')).toBe(
      promptBuilder({ system: 'You are a calculator.' }, plainChatTemplate).text('1+1?'),
    );
  });
});
