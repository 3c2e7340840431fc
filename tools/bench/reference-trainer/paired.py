#!/usr/bin/python3
"""SciPy's reading of an `rlvr compare` JSON (compare.json or merge-compare.mjs --json): the check of every figure
the docs quote from it, computed by code we did not write.

    /usr/bin/python3 tools/bench/reference-trainer/paired.py FILE.json --primary grail:dr-grpo [--also grail:grpo,...]

Final accuracy is the mean of the n samples per problem at the last evaluation, in points. Runs of the same seed are
pairs (same initial checkpoint, problem order and evaluation seeds). Per contrast A:B over the seeds both have:
the mean difference, SD and SE of the per-seed differences, its 95% t interval, the paired t p, the exact Wilcoxon
signed-rank p (scipy's method='exact'; zero differences dropped, as 'wilcox') and Welch's p on the unpaired finals.
The primary contrast is unadjusted; the others are Holm-adjusted among themselves. The power lines give the pairs a
two-sided paired t at alpha 0.05 needs for 80% power against a true difference of 1, 2, 3 points, from the observed
SD of the differences (noncentral t), and the smallest true difference these pairs detect with 80% power (for a
secondary also at alpha 0.05 / k, Holm's strictest step). Where the runs carry per-problem counts (`correct`), the evaluation's own
SE (over problems) is printed beside the between-seed SD.
"""

import argparse
import json
import math
import warnings

import numpy as np
from scipy import stats


def finals(doc):
    """{estimator: {seed: final eval record}}"""
    out = {}
    for run in doc["runs"]:
        out.setdefault(run["estimator"], {})[run["seed"]] = run["evals"][-1]
    return out


def power_of(sd, delta, n, alpha=0.05):
    """Power of a two-sided paired t on n pairs against a true difference delta (noncentral t)."""
    df = n - 1
    t_crit = stats.t.ppf(1 - alpha / 2, df)
    nc = delta / (sd / math.sqrt(n))
    return stats.nct.sf(t_crit, df, nc) + stats.nct.cdf(-t_crit, df, nc)


def pairs_needed(sd, delta, alpha=0.05, power=0.8):
    if sd == 0:
        return 2
    for n in range(2, 100_000):
        if power_of(sd, delta, n, alpha) >= power:
            return n
    return None


def detectable(sd, n, alpha=0.05, power=0.8):
    """The smallest true difference (points) a paired t on n pairs finds with this power: bisection on delta."""
    lo, hi = 0.0, 1.0
    while power_of(sd, hi, n, alpha) < power:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if power_of(sd, mid, n, alpha) < power else (lo, mid)
    return hi


def wilcoxon_exact(d):
    """Two-sided exact signed-rank p, zero differences dropped first (scipy >= 1.10 would switch to the normal
    approximation when zeros are present, so they are dropped here, as R's wilcox.test and the 'wilcox' rule do).
    With tied |d| SciPy 1.10's 'exact' takes the null distribution of untied ranks, which is not exact; then the p is
    SciPy's permutation_test over all 2^n sign flips of the midrank statistic (exact for ties)."""
    nz = d[~np.isclose(d, 0, atol=1e-9)]
    if len(nz) == 0:
        return 1.0
    a = np.abs(nz)
    if len(np.unique(np.round(a, 9))) == len(a):
        return stats.wilcoxon(nz, method="exact").pvalue
    ranks = stats.rankdata(np.round(a, 9))

    def signed_rank_sum(x, axis=-1):
        return np.sum(np.where(x > 0, ranks, 0.0), axis=axis)

    res = stats.permutation_test((nz,), signed_rank_sum, permutation_type="samples", n_resamples=np.inf, vectorized=True)
    return res.pvalue


def holm(ps):
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    adj = [0.0] * len(ps)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        adj[i] = running
    return adj


def contrast(f, a, b):
    seeds = sorted(set(f[a]) & set(f[b]))
    x = np.array([100 * f[a][s]["accuracy"] for s in seeds])
    y = np.array([100 * f[b][s]["accuracy"] for s in seeds])
    d = x - y
    n = len(d)
    sd = d.std(ddof=1)
    se = sd / math.sqrt(n)
    t = stats.t.ppf(0.975, n - 1)
    row = {
        "contrast": f"{a} - {b}",
        "pairs": n,
        "seeds": seeds,
        "diff": d.mean(),
        "sd": sd,
        "se": se,
        "ci": (d.mean() - t * se, d.mean() + t * se),
        "paired_p": stats.ttest_rel(x, y).pvalue,
        "wilcoxon_p": wilcoxon_exact(d),
        "welch_p": stats.ttest_ind(x, y, equal_var=False).pvalue,
        "per_seed": d.tolist(),
        "power": {k: pairs_needed(sd, k) for k in (1, 2, 3)},
        "detectable": detectable(sd, n) if sd > 0 else 0.0,
    }
    return row


def main():
    # the noncentral t at large n and small SD warns of underflow on its way to the answer
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--primary", required=True, help="A:B, e.g. grail:dr-grpo")
    ap.add_argument("--also", default="", help="secondary contrasts, comma-separated A:B")
    args = ap.parse_args()
    doc = json.load(open(args.file))
    f = finals(doc)
    print(f"{args.file}: final accuracy, points; +- is the SD over seeds, (SE) beside it")
    for est, runs in f.items():
        acc = np.array([100 * r["accuracy"] for r in runs.values()])
        line = f"  {est:10s} n={len(acc):2d}  {acc.mean():6.2f} +- {acc.std(ddof=1):.2f} SD  (SE {acc.std(ddof=1) / math.sqrt(len(acc)):.2f})"
        with_counts = [r for r in runs.values() if "correct" in r]
        if with_counts:
            # the sampling SE of one evaluation on these problems: each problem's n samples are Bernoulli(p_i), so
            # the mean's variance is sum_i p_i (1 - p_i) / (n - 1) / P^2 with p_i estimated (unbiasedly) from its counts.
            # The problems are the same on every seed, so their spread of difficulty is common to all runs and left out.
            def sampling_se(r):
                p = np.array(r["correct"]) / r["n"]
                return 100 * math.sqrt(np.sum(p * (1 - p) / (r["n"] - 1))) / len(p)

            line += f"; one evaluation's sampling SE {np.mean([sampling_se(r) for r in with_counts]):.2f}"
        print(line)
    rows = [contrast(f, *args.primary.split(":"))]
    secondary = [c for c in args.also.split(",") if c]
    rows += [contrast(f, *c.split(":")) for c in secondary]
    adj = holm([r["paired_p"] for r in rows[1:]]) if secondary else []
    adj_w = holm([r["wilcoxon_p"] for r in rows[1:]]) if secondary else []
    for i, r in enumerate(rows):
        kind = "primary (unadjusted)" if i == 0 else f"secondary (Holm over {len(secondary)}: paired {adj[i - 1]:.4g}, Wilcoxon {adj_w[i - 1]:.4g})"
        # a secondary's detectable difference at Holm's strictest level (alpha / number of secondaries) as well
        strict = "" if i == 0 or r["sd"] == 0 else f", {detectable(r['sd'], r['pairs'], 0.05 / len(secondary)):.2f} at alpha 0.05/{len(secondary)}"
        print(
            f"{r['contrast']}: {kind}; {r['pairs']} pairs {r['seeds']}\n"
            f"  diff {r['diff']:+.3f} points (SD {r['sd']:.3f}, SE {r['se']:.3f}), 95% CI [{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}]\n"
            f"  paired t p {r['paired_p']:.4g}; exact Wilcoxon p {r['wilcoxon_p']:.4g}; Welch p {r['welch_p']:.4g}\n"
            f"  per seed {[round(x, 2) for x in r['per_seed']]}\n"
            f"  pairs for 80% power (paired t, alpha 0.05) at 1/2/3 points: {r['power'][1]}/{r['power'][2]}/{r['power'][3]}\n"
            f"  detectable with 80% power on these {r['pairs']} pairs: {r['detectable']:.2f} points at alpha 0.05{strict}"
        )


if __name__ == "__main__":
    main()
