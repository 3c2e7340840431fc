"""PyTorch's eager reference for tools/gpu/measure.mjs, on the same GPU: a Qwen3-0.6B-shaped decoder
(28 layers, hidden 1024, 16 query / 8 key-value heads of 128, MLP 3072, vocabulary 151936, tied
embeddings, RMSNorm on q and k, RoPE) built from plain torch ops in float32, forward over 1 x 512
tokens and backward of the summed log-probs of 4 answer tokens with respect to the input embeddings
only (weights frozen): what the fused GRAIL pass computes. Median seconds of 3 after one warm-up,
synchronised. Prints one JSON line. Needs only torch (no transformers, nothing downloaded)."""
import json
import statistics
import time

import torch

V, D, L, H, KV, HD, F, T = 151936, 1024, 28, 16, 8, 128, 3072, 512


def main():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator(device="cpu").manual_seed(0)
    w = lambda *s: (torch.randn(*s, generator=g) * 0.02).to(dev)  # noqa: E731
    emb = w(V, D)
    layers = [dict(q=w(H * HD, D), k=w(KV * HD, D), v=w(KV * HD, D), o=w(D, H * HD), up=w(F, D), gate=w(F, D), down=w(D, F)) for _ in range(L)]
    inv = 1.0 / (1e6 ** (torch.arange(0, HD, 2, device=dev).float() / HD))
    ang = torch.outer(torch.arange(T, device=dev).float(), inv)
    cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
    mask = torch.full((T, T), float("-inf"), device=dev).triu(1)

    def rms(x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)

    def rope(x):
        a, b = x[..., : HD // 2], x[..., HD // 2 :]
        return x * cos + torch.cat([-b, a], -1) * sin

    ids = torch.randint(1, V, (1, T), generator=g).to(dev)

    def step():
        e = emb[ids].detach().requires_grad_(True)
        h = e
        for p in layers:
            x = rms(h)
            q = rms((x @ p["q"].T).view(1, T, H, HD)).transpose(1, 2)
            k = rms((x @ p["k"].T).view(1, T, KV, HD)).transpose(1, 2)
            v = (x @ p["v"].T).view(1, T, KV, HD).transpose(1, 2)
            q, k = rope(q), rope(k)
            k, v = k.repeat_interleave(H // KV, 1), v.repeat_interleave(H // KV, 1)
            a = torch.softmax(q @ k.transpose(-1, -2) / HD**0.5 + mask, -1) @ v
            h = h + a.transpose(1, 2).reshape(1, T, H * HD) @ p["o"].T
            x = rms(h)
            h = h + (torch.nn.functional.silu(x @ p["gate"].T) * (x @ p["up"].T)) @ p["down"].T
        logits = rms(h[:, T - 5 : T - 1]) @ emb.T
        loss = -torch.log_softmax(logits, -1).gather(-1, ids[:, T - 4 :, None]).sum()
        (grad,) = torch.autograd.grad(loss, e)
        (grad * e).norm(dim=-1).sum().item()  # the scores, read back: the same synchronisation as the JS side

    step()
    s = []
    for _ in range(3):
        if dev == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        if dev == "cuda":
            torch.cuda.synchronize()
        s.append(time.perf_counter() - t0)
    name = torch.cuda.get_device_name(0) if dev == "cuda" else "cpu"
    print(json.dumps({"torch": torch.__version__, "device": name, "seconds": statistics.median(s), "runs": s, "shape": "qwen3-0.6B, 1 x 512, fp32, eager"}))


if __name__ == "__main__":
    main()
