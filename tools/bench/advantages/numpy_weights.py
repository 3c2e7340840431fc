#!/usr/bin/env python3
"""Vectorised NumPy GRAIL and OAR-G estimators (Dr. GRPO advantage x weights) on a
dense [B, T] batch, timed; called by bench.mjs with the same scores it times.

argv: DIR B T REPEATS. Reads DIR/{scores.f32, rewards.f32, groups.i32, spans.i32},
writes DIR/{grail,oar-g}.f64 (float64 weights, for the agreement check) and prints
JSON timings (CPU ms of every timed run) for float32 and float64 arithmetic.
"""
import json
import sys
import time

import numpy as np


def dr_grpo(rewards, groups, n_groups):
    count = np.bincount(groups, minlength=n_groups)
    mean = np.bincount(groups, weights=rewards, minlength=n_groups) / np.maximum(count, 1)
    sq = np.bincount(groups, weights=(rewards - mean[groups]) ** 2, minlength=n_groups)
    a = rewards - mean[groups]
    a[(count[groups] < 2) | (sq[groups] == 0)] = 0
    return a


def span_masks(spans, T):
    pos = np.arange(T)[None, :]
    s = spans.reshape(-1, 6)
    has = s[:, 0] >= 0
    col = lambda k: s[:, k][:, None]
    delim = ((pos >= col(0)) & (pos < col(1))) | ((pos >= col(4)) & (pos < col(5))) | (pos >= col(5))
    content = (pos >= col(2)) & (pos < col(3))
    return has, delim & has[:, None], content & has[:, None]


def grail(scores, adv, has, delim, content, dtype, sigma_w=0.5, w_mean=1.0, w_min=0.5, w_max=5.0, eps=1e-8):
    ell = np.log(scores + dtype(eps))
    mu = ell.mean(axis=1, keepdims=True)
    var = ((ell - mu) ** 2).mean(axis=1, keepdims=True)
    w = np.clip(dtype(w_mean) + dtype(sigma_w) * (ell - mu) / np.sqrt(var + dtype(eps)), dtype(w_min), dtype(w_max))
    fallback = ~has | (adv > 0)  # symmetry "wrong"
    w[fallback] = 1
    w[delim] = w_mean
    w[content] = w_max
    return adv[:, None].astype(dtype) * w, w


def oar_g(scores, adv, has, dtype, tau=0.4, beta=2.0, floor=0.1, eps=1e-12):
    n = scores.shape[1]
    I = np.log1p(scores)
    lo = I.min(axis=1, keepdims=True)
    hi = I.max(axis=1, keepdims=True)
    Ih = (I - lo) / (hi - lo + dtype(eps))
    k = min(int(np.floor(tau * n)), n - 1)
    thr = np.partition(Ih, k, axis=1)[:, k : k + 1]
    w = np.where(Ih < thr, np.maximum(Ih / (thr + dtype(eps)), dtype(floor)), 1 + dtype(beta) * (Ih - thr) / (1 - thr + dtype(eps)))
    w *= n / w.sum(axis=1, keepdims=True)
    w[~has] = 1
    return adv[:, None].astype(dtype) * w, w


def main():
    d, B, T, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    scores32 = np.fromfile(f"{d}/scores.f32", dtype=np.float32).reshape(B, T)
    rewards = np.fromfile(f"{d}/rewards.f32", dtype=np.float32).astype(np.float64)
    groups = np.fromfile(f"{d}/groups.i32", dtype=np.int32)
    spans = np.fromfile(f"{d}/spans.i32", dtype=np.int32)
    out = {"numpy": np.__version__}
    for name in ("grail", "oar-g"):
        out[name] = {}
        for dtype in (np.float32, np.float64):
            scores = scores32.astype(dtype)

            def estimate():
                adv = dr_grpo(rewards, groups, int(groups.max()) + 1)
                has, delim, content = span_masks(spans, T)
                if name == "grail":
                    return grail(scores, adv, has, delim, content, dtype)
                return oar_g(scores, adv, has, dtype)

            estimate()  # warm-up
            ms = []
            for _ in range(repeats):
                t0 = time.process_time()
                _, w = estimate()
                ms.append((time.process_time() - t0) * 1e3)
            out[name][np.dtype(dtype).name] = ms
            if dtype is np.float64:
                w.astype(np.float64).tofile(f"{d}/{name}.f64")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
