import { join } from 'node:path';
import { QWEN3_TOKENIZER_DIR } from '../test-utils/fixtures.js';
import { describe, expect, it } from 'vitest';
import { ChatTemplate } from './chat.js';

const CONFIG = join(QWEN3_TOKENIZER_DIR, 'tokenizer_config.json');

describe("Qwen3's chat template", () => {
  const t = ChatTemplate.fromTokenizerConfig(CONFIG);
  const q = 'What is 2+2? Please reason step by step, and put your final answer within \\boxed{}.';

  it('renders a user turn with the generation prompt (thinking on by default)', () => {
    expect(t.render([{ role: 'user', content: q }])).toBe(`<|im_start|>user\n${q}<|im_end|>\n<|im_start|>assistant\n`);
  });

  it('enable_thinking=false opens an empty think block', () => {
    expect(
      t.render(
        [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: q },
        ],
        { enableThinking: false },
      ),
    ).toBe(`<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n${q}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n`);
  });

  it('drops the reasoning of earlier assistant turns and keeps the last', () => {
    const out = t.render(
      [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: '<think>\nr1\n</think>\n\nA1' },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: 'A2', reasoning_content: 'r2' },
      ],
      { addGenerationPrompt: false },
    );
    expect(out).toBe(
      '<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n<|im_start|>user\nb<|im_end|>\n<|im_start|>assistant\n<think>\nr2\n</think>\n\nA2<|im_end|>\n',
    );
    expect(t.eosToken).toBe('<|im_end|>');
  });
});
