/**
 * The contract every `Sampler` keeps, as one suite to run against each
 * implementation (the HTTP sampler against the vLLM double and against rlvr-serve, the
 * in-process policy sampler).
 */
import { describe, expect, it } from 'vitest';
import type { Sampler, SampleRequest, SamplePrompt, SamplingParams } from '../samplers/sampler.js';

export interface ContractSetup {
  sampler: Sampler;
  /** prompts this sampler accepts */
  prompts: SamplePrompt[];
  /** a stop string the sampler's generations contain */
  stop: string;
}

const params = (over: Partial<SamplingParams> = {}): SamplingParams => ({
  temperature: 1,
  topP: 1,
  topK: 0,
  maxNewTokens: 64,
  stop: [],
  seed: 1,
  ...over,
});

export function describeSamplerContract(name: string, setup: () => Promise<ContractSetup>): void {
  describe(`Sampler contract: ${name}`, () => {
    const reqs = (s: ContractSetup, n: number, over: Partial<SamplingParams> = {}): SampleRequest[] =>
      s.prompts.map((prompt, i) => ({ prompt, n, params: params({ seed: 100 + i, ...over }) }));

    it('returns one result per request, in order, with n completions each', async () => {
      const s = await setup();
      const out = await s.sampler.sample(reqs(s, 3));
      expect(out).toHaveLength(s.prompts.length);
      for (const r of out) {
        expect(r.completions).toHaveLength(3);
        for (const c of r.completions) {
          expect(c.finish).not.toBe('error');
          expect(c.tokens.length).toBeGreaterThan(0);
          if (c.logprobs) {
            expect(c.logprobs).toHaveLength(c.tokens.length);
            expect(c.logprobs.every((x) => Number.isFinite(x) && x <= 0)).toBe(true);
          }
        }
      }
    });

    it('gives the same tokens for the same seed and other tokens for another seed', async () => {
      const s = await setup();
      const a = await s.sampler.sample(reqs(s, 4));
      const b = await s.sampler.sample(reqs(s, 4));
      expect(b).toEqual(a);
      const c = await s.sampler.sample(reqs(s, 4, { seed: 999 }));
      expect(c.map((r) => r.completions.map((x) => x.tokens))).not.toEqual(a.map((r) => r.completions.map((x) => x.tokens)));
    });

    it('stops at maxNewTokens with finish "length", and at a stop string with finish "stop"', async () => {
      const s = await setup();
      for (const r of await s.sampler.sample(reqs(s, 2, { maxNewTokens: 2 }))) {
        for (const c of r.completions) {
          expect(c.tokens.length).toBeLessThanOrEqual(2);
          if (c.finish === 'length') expect(c.tokens).toHaveLength(2);
        }
      }
      const full = await s.sampler.sample(reqs(s, 2));
      const cut = await s.sampler.sample(reqs(s, 2, { stop: [s.stop] }));
      cut.forEach((r, i) =>
        r.completions.forEach((c, j) => {
          expect(c.finish).toBe('stop');
          expect(c.tokens.length).toBeLessThan(full[i]!.completions[j]!.tokens.length);
          if (c.text !== undefined) expect(c.text.includes(s.stop)).toBe(false);
        }),
      );
    });
  });
}
