import type { FinishReason } from '@rlvr/core';
import type { ChatMessage } from '@rlvr/policy/tokenizer';
import type { TokenBytes } from '@rlvr/core';

/**
 * One prompt to sample from. Give what the sampler needs: token ids for an
 * in-process policy or a `/v1/completions` server (ids are sent as they are, so
 * the batch's prompt tokens are exactly what was conditioned on), text for a
 * completions server without a local tokenizer, messages for `/v1/chat/completions`.
 */
export interface SamplePrompt {
  /** prompt token ids, chat template already applied */
  tokens?: readonly number[];
  /** prompt text, chat template already applied */
  text?: string;
  /** the conversation, for samplers that apply the template themselves */
  messages?: readonly ChatMessage[];
  /**
   * [S] token ids of the problem's reference solution: not sent to the sampler; `sampleGroups` gives
   * it to every rollout of the prompt (`RolloutBatch.referenceTokens`)
   */
  reference?: readonly number[];
}

/** Sampling parameters of one request; `sampleGroups` derives them from its options. */
export interface SamplingParams {
  /** 0 = greedy */
  temperature: number;
  /** nucleus mass in (0, 1]; 1 = off */
  topP: number;
  /** 0 = off */
  topK: number;
  maxNewTokens: number;
  /** stop strings: generation ends after the first one (finish `stop`) */
  stop: readonly string[];
  /** this request's seed (uint32), derived from the run seed and the prompt index */
  seed: number;
}

export interface SampleRequest {
  prompt: SamplePrompt;
  /** completions wanted for this prompt (the group size) */
  n: number;
  params: SamplingParams;
}

/** One sampled completion. A failed one has finish `error`, no tokens and an `error` message. */
export interface SampledCompletion {
  /** [T] sampled token ids, EOS included when the sampler returns it */
  tokens: readonly number[];
  /** [T] log-probs of the sampled tokens under the sampling policy, when the sampler reports them */
  logprobs?: readonly number[];
  finish: FinishReason;
  /** the decoded text, when the sampler has it */
  text?: string;
  /** why it failed (finish `error` only) */
  error?: string;
}

/** What a sampler returns for one request: exactly `n` completions, in order. */
export interface PromptSamples {
  /** the prompt token ids conditioned on, when known (else empty) */
  promptTokens: readonly number[];
  completions: readonly SampledCompletion[];
  /**
   * The tokens of the n completions together, when the sampler returns text without token ids
   * (an HTTP sampler with `returns: 'text'`: the server's `usage.completion_tokens`); the
   * completions' `tokens` are then empty
   */
  completionTokens?: number;
}

/**
 * Something that turns prompts into completions: the OpenAI-compatible HTTP
 * sampler, the in-process policy sampler (`policySampler` on a `@rlvr/policy` model), or your own.
 *
 * Contract (checked by `sampleGroups`): `sample` resolves to one `PromptSamples`
 * per request, in request order, each with exactly `n` completions. A request
 * that fails is not thrown: its completions come back with finish `error`. It
 * rejects only when `signal` aborts or on a bug.
 */
export interface Sampler {
  readonly name: string;
  /** the bytes of each token id, when this sampler knows its tokenizer (used to locate answer spans) */
  readonly tokenBytes?: TokenBytes;
  sample(requests: readonly SampleRequest[], signal?: AbortSignal): Promise<PromptSamples[]>;
}
