"""PyTorch CPU side of the @rlvr/policy benchmark (the same model as the tfjs one, plain torch).

    /usr/bin/python3 tools/bench/policy/bench_torch.py '{"config": {...}, "batch": 16, "seq": 256, ...}'

Prints one JSON line: forward+backward and KV-cache decode tokens/s.
"""
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "policy"))
import qwen3_torch as Q  # noqa: E402


def main():
    args = json.loads(sys.argv[1])
    torch.set_num_threads(args.get("threads", 2))
    cfg = args["config"]
    B, T = args["batch"], args["seq"]
    p = {k: v.requires_grad_(True) for k, v in Q.init_params(cfg, seed=0, std=0.02).items()}
    g = torch.Generator().manual_seed(0)
    V = cfg["vocab_size"]
    ids = torch.randint(0, V, (B, T), generator=g)
    mask = torch.ones(B, T, dtype=torch.long)
    targets = torch.roll(ids, -1, 1)

    def train_step():
        emb = p["model.embed_tokens.weight"][ids]
        logits = Q.forward_logits(p, cfg, emb, mask)
        lp, ent = Q.token_logprobs(logits, targets)
        loss = -lp.mean()
        loss.backward()
        for v in p.values():
            v.grad = None

    train_step()  # warm-up
    steps = args.get("train_steps", 3)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        train_step()
    train_s = (time.perf_counter() - t0) / steps
    train_cpu = (time.process_time() - c0) / steps

    prompt, new = args.get("prompt", 16), args.get("new_tokens", 64)
    with torch.no_grad():
        def decode():
            pid = torch.randint(0, V, (B, prompt), generator=g)
            key_mask = torch.ones(B, prompt, dtype=torch.long)
            pos = torch.arange(prompt)[None].expand(B, prompt)
            h, cache = Q.decode_step(p, cfg, p["model.embed_tokens.weight"][pid], pos, key_mask, None)
            tok = (h[:, -1] @ Q.lm_head(p, cfg).T).argmax(-1)
            t0 = time.perf_counter()
            for s in range(new):
                key_mask = torch.cat([key_mask, torch.ones(B, 1, dtype=torch.long)], 1)
                pos = torch.full((B, 1), prompt + s)
                h, cache = Q.decode_step(p, cfg, p["model.embed_tokens.weight"][tok][:, None], pos, key_mask, cache)
                tok = (h[:, -1] @ Q.lm_head(p, cfg).T).argmax(-1)
            return time.perf_counter() - t0
        decode()  # warm-up
        c0 = time.process_time()
        decode_s = decode()
        decode_cpu = time.process_time() - c0
    print(json.dumps({
        "framework": "pytorch",
        "version": torch.__version__,
        "threads": torch.get_num_threads(),
        "train_step_s": train_s,
        "train_tokens_per_s": B * T / train_s,
        "train_cpu_s": train_cpu,
        "train_tokens_per_cpu_s": B * T / train_cpu,
        "decode_s": decode_s,
        "decode_tokens_per_s": B * new / decode_s,
        "decode_tokens_per_cpu_s": B * new / decode_cpu,
    }))


if __name__ == "__main__":
    main()
