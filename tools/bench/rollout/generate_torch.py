"""PyTorch CPU side of the @rlvr/rollout generation benchmark: the same Qwen3 model
(tools/fixtures/policy/qwen3_torch.py, plain torch, random weights) generating with a KV cache,
greedy and sampled (temperature 1, with the sampled token's log-prob, as the tfjs sampler does).

    /usr/bin/python3 tools/bench/rollout/generate_torch.py '{"config": {...}, "batch": 16, "prompt": 16, "new_tokens": 256, "threads": 2, "modes": ["sampled", "greedy"]}'

Prints one JSON line with tokens/s (wall-clock and per CPU-second) of each mode (times include the prefill).
"""
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "policy"))
import qwen3_torch as Q  # noqa: E402


def generate(p, cfg, prompt_ids, new_tokens, greedy, gen):
    """prompt_ids [B, P] -> (tokens [B, new], logprobs [B, new]); one prefill, then one cached step per token."""
    B, P = prompt_ids.shape
    emb = p["model.embed_tokens.weight"]
    head = Q.lm_head(p, cfg)
    key_mask = torch.ones(B, P, dtype=torch.long)
    pos = torch.arange(P)[None].expand(B, P)
    h, cache = Q.decode_step(p, cfg, emb[prompt_ids], pos, key_mask, None)
    toks, lps = [], []
    for s in range(new_tokens):
        logp = (h[:, -1] @ head.T).log_softmax(-1)  # (B, V), temperature 1
        tok = logp.argmax(-1) if greedy else torch.multinomial(logp.exp(), 1, generator=gen)[:, 0]
        toks.append(tok)
        lps.append(logp.gather(-1, tok[:, None])[:, 0])
        if s + 1 == new_tokens:
            break
        key_mask = torch.cat([key_mask, torch.ones(B, 1, dtype=torch.long)], 1)
        h, cache = Q.decode_step(p, cfg, emb[tok][:, None], torch.full((B, 1), P + s), key_mask, cache)
    return torch.stack(toks, 1), torch.stack(lps, 1)


def main():
    args = json.loads(sys.argv[1])
    torch.set_num_threads(args.get("threads", 2))
    cfg = args["config"]
    B, P, N = args["batch"], args["prompt"], args["new_tokens"]
    p = Q.init_params(cfg, seed=0, std=0.02)
    gen = torch.Generator().manual_seed(0)
    prompt = (torch.arange(P) * 797 + 13) % cfg["vocab_size"]
    prompt_ids = prompt[None].expand(B, P).contiguous()
    out = {"framework": "pytorch", "version": torch.__version__, "threads": torch.get_num_threads()}
    with torch.no_grad():
        generate(p, cfg, prompt_ids, 8, True, gen)  # warm-up
        for mode in args.get("modes", ["sampled", "greedy"]):
            t0, c0 = time.perf_counter(), time.process_time()
            toks, _ = generate(p, cfg, prompt_ids, N, mode == "greedy", gen)
            s, cpu = time.perf_counter() - t0, time.process_time() - c0
            assert toks.shape == (B, N)
            out[mode] = {"new_tokens": N, "seconds": round(s, 3), "tokens_per_s": round(B * N / s, 1),
                         "cpu_seconds": round(cpu, 3), "tokens_per_cpu_s": round(B * N / cpu, 1)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
