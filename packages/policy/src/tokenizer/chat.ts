import { Template } from '@huggingface/jinja';
import { PolicyError } from '../errors.js';
import { nodeBuiltin } from '../node-builtin.js';

/** One chat message as chat templates expect it (the one `ChatMessage` of rlvr: prompts, samplers and servers use it). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Assistant reasoning (Qwen3 templates render it inside <think>). */
  reasoning_content?: string;
}

/** What every chat template is told besides the messages. */
export interface ChatTemplateOptions {
  /** End with the header of an assistant turn, so the model writes the answer next. */
  addGenerationPrompt: boolean;
  /** Qwen3's switch: false renders an empty think block, so the model answers directly. */
  enableThinking: boolean;
  /** More variables for a Jinja template (a server's `chat_template_kwargs`); the built-in templates take none and refuse them. */
  extra?: Record<string, unknown>;
}

/**
 * Renders a conversation into the prompt text a model was trained on: a model's own template
 * (`ChatTemplate.apply`, from its `tokenizer_config.json`), or the built-in `plainChatTemplate` and
 * `chatmlTemplate`.
 */
export type ApplyChatTemplate = (messages: readonly ChatMessage[], options: ChatTemplateOptions) => string;

const PLAIN_LABEL = { system: 'System', user: 'User', assistant: 'Assistant', tool: 'Tool' } as const;

/**
 * The layout of models without a chat template (a tiny model trained from scratch, such as the
 * embedded default): `User: ...` / `Assistant: ...` blocks, one blank line apart, ending with
 * `Assistant:` and a newline. The embedded model's `tokenizer_config.json` renders exactly this.
 */
export const plainChatTemplate: ApplyChatTemplate = (messages, { addGenerationPrompt, extra }) => {
  noExtra('plain', extra);
  const blocks = messages.map((m) => `${PLAIN_LABEL[m.role]}: ${m.content}`);
  if (addGenerationPrompt) blocks.push('Assistant:\n');
  return blocks.join('\n\n');
};

/**
 * ChatML, as Qwen2.5/Qwen3 render a plain conversation (no tools, no images):
 * `<|im_start|>role\ncontent<|im_end|>\n` per message, then `<|im_start|>assistant\n`,
 * followed by an empty think block when `enableThinking` is false (Qwen3). The fallback of a model
 * directory without `tokenizer_config.json` whose tokenizer has the ChatML tokens.
 */
export const chatmlTemplate: ApplyChatTemplate = (messages, { addGenerationPrompt, enableThinking, extra }) => {
  noExtra('ChatML', extra);
  let s = '';
  for (const m of messages) s += `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
  if (addGenerationPrompt) s += '<|im_start|>assistant\n' + (enableThinking ? '' : '<think>\n\n</think>\n\n');
  return s;
};

export interface ChatRenderOptions {
  /** Append the assistant turn opener (default true, for generation). */
  addGenerationPrompt?: boolean;
  /** Qwen3: false renders an empty think block so the model answers directly. Default: template's default. */
  enableThinking?: boolean;
  /** Extra variables passed to the template. */
  extra?: Record<string, unknown>;
}

function noExtra(name: string, extra: Record<string, unknown> | undefined): void {
  const keys = Object.keys(extra ?? {});
  if (keys.length > 0)
    throw new PolicyError('invalid_input', `the built-in ${name} chat template takes no variables (got ${keys.join(', ')})`);
}

/**
 * A chat template from a Hugging Face `tokenizer_config.json` (`chat_template` field), rendered
 * with `@huggingface/jinja`, the same Jinja subset the Hugging Face JS stack uses.
 */
export class ChatTemplate {
  readonly source: string;
  readonly bosToken: string | undefined;
  readonly eosToken: string | undefined;
  private readonly template: Template;

  constructor(source: string, tokens: { bos?: string; eos?: string } = {}) {
    this.source = source;
    this.bosToken = tokens.bos;
    this.eosToken = tokens.eos;
    try {
      this.template = new Template(source);
    } catch (cause) {
      throw new PolicyError('invalid_tokenizer', `chat template does not parse: ${(cause as Error).message}`, {}, { cause });
    }
  }

  /** Read `chat_template` (string, or the `default` entry of a named list) from tokenizer_config.json. Node only (a page: `fromConfig`). */
  static fromTokenizerConfig(file: string): ChatTemplate {
    const fs = nodeBuiltin(
      'node:fs',
      'invalid_tokenizer',
      'in a browser, fetch tokenizer_config.json and pass it to ChatTemplate.fromConfig',
    );
    let cfg: unknown;
    try {
      cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (cause) {
      throw new PolicyError('invalid_tokenizer', `cannot read tokenizer_config.json: ${(cause as Error).message}`, { file }, { cause });
    }
    return ChatTemplate.fromConfig(cfg, file);
  }

  /** The template of a parsed tokenizer_config.json (`file` names it in errors). */
  static fromConfig(config: unknown, file = 'tokenizer_config.json'): ChatTemplate {
    const cfg = (config ?? {}) as {
      chat_template?: string | { name: string; template: string }[];
      bos_token?: unknown;
      eos_token?: unknown;
    };
    let src = cfg.chat_template;
    if (Array.isArray(src)) src = src.find((t) => t.name === 'default')?.template;
    if (typeof src !== 'string') throw new PolicyError('invalid_tokenizer', 'tokenizer_config.json has no chat_template', { file });
    return new ChatTemplate(src, { bos: tokenText(cfg.bos_token), eos: tokenText(cfg.eos_token) });
  }

  /** This template as an `ApplyChatTemplate` (for prompt builders, samplers and servers). */
  readonly apply: ApplyChatTemplate = (messages, o) =>
    this.render(messages, {
      addGenerationPrompt: o.addGenerationPrompt,
      enableThinking: o.enableThinking,
      ...(o.extra ? { extra: o.extra } : {}),
    });

  /** Render messages to the prompt text (tokenize it with special tokens allowed). */
  render(messages: readonly ChatMessage[], options: ChatRenderOptions = {}): string {
    const vars: Record<string, unknown> = {
      messages,
      add_generation_prompt: options.addGenerationPrompt ?? true,
      bos_token: this.bosToken ?? '',
      eos_token: this.eosToken ?? '',
      ...options.extra,
    };
    if (options.enableThinking !== undefined) vars.enable_thinking = options.enableThinking;
    try {
      return this.template.render(vars);
    } catch (cause) {
      throw new PolicyError('invalid_input', `chat template failed to render: ${(cause as Error).message}`, {}, { cause });
    }
  }
}

function tokenText(t: unknown): string | undefined {
  if (typeof t === 'string') return t;
  if (t && typeof t === 'object' && typeof (t as { content?: unknown }).content === 'string') return (t as { content: string }).content;
  return undefined;
}
