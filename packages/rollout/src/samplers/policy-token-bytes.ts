import type { Tokenizer } from '@rlvr/policy';
import { RolloutError } from '../errors.js';
import type { TokenBytes } from '@rlvr/core';

/**
 * Token bytes of a `@rlvr/policy` tokenizer as decoded text sees them: special tokens are empty,
 * so `<|im_end|>` never shows up in completion text, stop-string matching or answer spans. Added
 * tokens that text keeps (`tokenizer.textTokens`, Qwen3's `<think>` and `</think>`) have their
 * bytes, as in vLLM's text: the grader and the span locator see the think blocks.
 *
 * `strict` (for files of ids, e.g. the `spans` CLI): an id the tokenizer does not have throws
 * `RolloutError('invalid_tokenizer')`. Not strict (for sampling): such ids (the padding rows of
 * an embedding table larger than the vocabulary, as in Qwen3) are empty too.
 */
export function policyTokenBytes(tokenizer: Tokenizer, options: { strict?: boolean } = {}): TokenBytes {
  const special = new Set([...tokenizer.specialTokens.values()].filter((id) => !tokenizer.textTokens.has(id)));
  const empty = new Uint8Array(0);
  return {
    tokenBytes: (id: number) => {
      if (special.has(id)) return empty;
      try {
        return tokenizer.tokenBytes(id);
      } catch (cause) {
        if (options.strict)
          throw new RolloutError(
            'invalid_tokenizer',
            `token id ${id} is not in the vocabulary (${tokenizer.vocabSize} ids, ${tokenizer.info.name})`,
            {},
            { cause },
          );
        return empty;
      }
    },
  };
}
