#!/usr/bin/python3
"""The GRAIL paper's credit hypotheses, tested with SciPy from the per-rollout values of `rlvr credit`'s credit.json.

  /usr/bin/python3 tools/credit/hypotheses.py CREDIT.json [--method grail] [--markdown]

Prints, from the per-rollout columns only (never the file's own aggregates, which tools/credit/check.py verifies):

  H1  error-line AUROC of wrong rollouts: each method's mean against 0.5 (uniform; one-sample t), and the method
      against every other on the rollouts scored (and not degenerate) under both (paired t, Wilcoxon signed-rank);
  H2  the method's mid-chain credit in wrong rollouts (by the verifier) against correct ones (Welch's t): the paper
      says wrong rollouts carry more weight across the middle of the chain;
  H3  the U-shape of correct rollouts: credit outside the middle third minus inside it, against 0 (one-sample t),
      and each arm apart (the first third minus the middle, the last third minus the middle).

Each line gives n, the mean, its 95% t interval, the p-value, and, where p >= 0.05, the n that a two-sided test at
0.05 would need for 80% power if the observed mean (or difference) were the true one (noncentral t).

Debian: apt-get install -y python3-scipy
"""

import argparse
import json
import math

import numpy as np
from scipy import stats


def column(report, method, key):
    v = report["values"][method]
    deg = np.array(v["degenerate"], dtype=bool)
    x = np.array([np.nan if a is None else a for a in v[key]], dtype=float)
    return x, deg


def ci(x):
    n = len(x)
    if n < 2:
        return (math.nan, math.nan)
    h = stats.t.ppf(0.975, n - 1) * np.std(x, ddof=1) / math.sqrt(n)
    return (x.mean() - h, x.mean() + h)


def n80(effect, sd, two_sample=False):
    """Smallest n (per group when two_sample) with 80% power at a two-sided 0.05, or None beyond 100,000."""
    if not (sd > 0) or effect == 0 or not math.isfinite(effect):
        return None
    d = abs(effect) / sd
    for n in range(3, 100_001):
        df = 2 * n - 2 if two_sample else n - 1
        nc = d * math.sqrt(n / 2 if two_sample else n)
        crit = stats.t.ppf(0.975, df)
        if stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc) >= 0.8:
            return n
    return None


def one_sample(x, mu=0.0):
    x = x[np.isfinite(x)]
    if len(x) < 2 or np.std(x) == 0:
        return dict(n=len(x), mean=float(x.mean()) if len(x) else math.nan, ci=(math.nan, math.nan), p=math.nan, n80=None)
    t = stats.ttest_1samp(x, mu)
    return dict(n=len(x), mean=float(x.mean()), ci=ci(x), p=float(t.pvalue), n80=n80(x.mean() - mu, np.std(x, ddof=1)))


def fmt_p(p):
    return "-" if not math.isfinite(p) else f"{p:.2g}"


def line(name, r, extra=""):
    lo, hi = r["ci"]
    need = "" if not math.isfinite(r["p"]) or r["p"] < 0.05 else f", 80% power at n = {r['n80'] or '>100,000'}"
    return f"{name:<34} n {r['n']:>5}  mean {r['mean']:+.4f}  95% CI [{lo:+.4f}, {hi:+.4f}]  p {fmt_p(r['p'])}{need}{extra}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--method", default="grail")
    args = ap.parse_args()
    r = json.load(open(args.report))
    methods = list(r["values"].keys())
    status = np.array(r["rollouts"]["status"])
    correct = np.array(r["rollouts"]["correct"], dtype=bool)
    c = r["counts"]
    wrong_labelled = c["wrong"] - c["status"].get("unlabelled", 0)
    print(f"{args.report}: {c['rollouts']} rollouts, {c['correct']} correct, {c['wrong']} wrong; status {c['status']}")
    if wrong_labelled > 0:
        share = c["status"].get("scored", 0) / wrong_labelled
        print(f"wrong and labelled with a correct prefix of one line or more: {c['status'].get('scored', 0)} of {wrong_labelled} ({share:.1%})")

    print("\nH1  error-line AUROC against uniform (0.5), wrong rollouts scored, not degenerate")
    auc = {}
    for m in methods:
        x, deg = column(r, m, "auroc")
        keep = (status == "scored") & ~deg & np.isfinite(x)
        auc[m] = (x, keep)
        print(line(m, one_sample(x[keep], 0.5), " (against 0.5)"))
    a = args.method
    if a in auc:
        print(f"\nH1  {a} against each method, paired on the rollouts scored under both")
        for m in methods:
            if m == a:
                continue
            keep = auc[a][1] & auc[m][1]
            d = auc[a][0][keep] - auc[m][0][keep]
            res = one_sample(d)
            w = stats.wilcoxon(d).pvalue if len(d) > 0 and np.any(d != 0) else math.nan
            print(line(f"{a} - {m}", res, f"  (Wilcoxon p {fmt_p(float(w))})"))

        print(f"\nH2  {a}'s mid-chain credit (positions 1/3 to 2/3), wrong rollouts against correct ones (Welch)")
        mid, deg = column(r, a, "middle")
        ok = ~deg & np.isfinite(mid)
        w_, c_ = mid[ok & ~correct], mid[ok & correct]
        if len(w_) >= 2 and len(c_) >= 2:
            t = stats.ttest_ind(w_, c_, equal_var=False)
            diff = w_.mean() - c_.mean()
            pooled = math.sqrt((np.var(w_, ddof=1) + np.var(c_, ddof=1)) / 2)
            need = "" if t.pvalue < 0.05 else f", 80% power at {n80(diff, pooled, two_sample=True) or '>100,000'} per group"
            print(
                f"wrong {w_.mean():.4f} (n {len(w_)}), correct {c_.mean():.4f} (n {len(c_)}), difference {diff:+.4f}, "
                f"Welch t {t.statistic:.2f}, p {fmt_p(float(t.pvalue))}{need}"
            )
        else:
            print("too few rollouts")

        print(f"\nH3  {a}'s U-shape in correct rollouts: credit outside the middle third minus inside it, against 0")
        u, deg = column(r, a, "uContrast")
        ok = ~deg & np.isfinite(u) & correct
        print(line("U contrast", one_sample(u[ok])))
        # the two arms of the U apart: a rise at the end alone (the answer line) is not a U
        prof = np.array([[np.nan if x is None else x for x in row] for row in r["values"][a]["profile"]], dtype=float)
        bins = prof.shape[1]
        lo, hi = r["options"]["middle"]
        centre = (np.arange(bins) + 0.5) / bins
        first, mid, last = centre < lo, (centre >= lo) & (centre < hi), centre >= hi
        rows = prof[ok]
        for name, part in (("first third - middle", first), ("last third - middle", last)):
            d = np.nanmean(rows[:, part], axis=1) - np.nanmean(rows[:, mid], axis=1)
            print(line(name, one_sample(d[np.isfinite(d)])))
        print("profile (bin means): " + " ".join(f"{v:.3f}" for v in np.nanmean(rows, axis=0)))


if __name__ == "__main__":
    main()
