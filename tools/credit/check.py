#!/usr/bin/python3
"""SciPy's answers for @rlvr/report's credit metrics (packages/report/src/credit/), computed independently.

Two uses:

  /usr/bin/python3 tools/credit/check.py
      Draws a seeded synthetic batch (float32 credits with many ties, a uniform method, degenerate rollouts,
      unlabelled, first-line, empty-error-line and conflicting labels), writes it to
      packages/report/test/fixtures/credit-input.json, recomputes every per-rollout value from the tokens (the
      AUROC as scipy.stats.mannwhitneyu's U / (n1 n2)), every mean and SD over rollouts, the paired t and Wilcoxon
      tests (scipy.stats.ttest_1samp, scipy.stats.wilcoxon) and Welch's t (scipy.stats.ttest_ind), and writes
      packages/report/test/fixtures/credit-scipy.json. src/credit/scipy.test.ts compares @rlvr/report's figures
      with it. The bootstrap intervals use @rlvr/report's seeded generator and are not recomputed here.

  /usr/bin/python3 tools/credit/check.py REPORT.json
      Recomputes, from the per-rollout values of a file `writeCreditJson` wrote, every mean, SD, paired test and
      Welch test in it, prints the largest deviation, and exits 1 if one exceeds 1e-9 (relative).

Debian: apt-get install -y python3-scipy
"""

import json
import math
import os
import sys

import warnings

import numpy as np
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))
warnings.filterwarnings("ignore", category=RuntimeWarning)  # zero-variance samples (the uniform method) give NaN, written as null
FIXTURES = os.path.join(HERE, "..", "..", "packages", "report", "test", "fixtures")
OPTIONS = {"bins": 10, "errorBins": 3, "middle": [1 / 3, 2 / 3], "resamples": 500, "seed": 7}


def synthetic(seed=20261207, n=90):
    rng = np.random.default_rng(seed)
    rollouts = []
    for i in range(n):
        tokens = int(rng.integers(8, 41))
        correct = bool(rng.random() < 0.35)
        u = rng.random()
        if correct:
            label = "correct" if u < 0.95 else {"kind": "copy", "tokenStart": 1, "tokenEnd": 3}
        elif u < 0.08:
            label = "unlabelled"
        elif u < 0.13:
            label = {"kind": "copy", "tokenStart": 0, "tokenEnd": int(rng.integers(1, 5))}
        elif u < 0.16:  # a preamble before a wrong first line: still no correct prefix
            label = {"kind": "copy", "tokenStart": 2, "tokenEnd": 4, "correctSteps": 0}
        elif u < 0.20:
            s = int(rng.integers(1, tokens))
            label = {"kind": "missing step", "tokenStart": s, "tokenEnd": s}
        elif u < 0.23:
            label = "correct"
        else:
            s = int(rng.integers(1, tokens - 2))
            label = {"kind": "arithmetic", "tokenStart": s, "tokenEnd": int(min(tokens, s + rng.integers(1, 8)))}
        rollouts.append({"index": 100 + i, "group": i // 6, "correct": correct, "label": label, "tokens": tokens})
    T = sum(r["tokens"] for r in rollouts)
    f32 = lambda x: [float(v) for v in np.asarray(x, dtype=np.float32)]  # noqa: E731
    seq = np.repeat(rng.normal(size=n), [r["tokens"] for r in rollouts])
    smooth = rng.lognormal(0, 0.4, size=T)
    offsets = np.cumsum([0] + [r["tokens"] for r in rollouts])
    for r, o in zip(rollouts, offsets):
        if isinstance(r["label"], dict):  # blame on the error line: an AUROC above 1/2 to detect
            smooth[o + r["label"]["tokenStart"] : o + r["label"]["tokenEnd"]] *= 1.8
    coarse = np.round(rng.normal(1, 0.5, size=T), 1)  # many ties
    deg = (rng.random(n) < 0.15).astype(int)
    methods = [
        {"name": "uniform", "credit": f32(np.ones(T)), "absAdvantage": f32(np.abs(seq)), "degenerate": [0] * n},
        {"name": "smooth", "credit": f32(smooth), "absAdvantage": f32(np.abs(seq * smooth)), "degenerate": [0] * n},
        {"name": "coarse", "credit": f32(coarse), "absAdvantage": f32(np.abs(coarse)), "degenerate": [int(d) for d in deg]},
    ]
    # a rollout whose |advantage| is 0 everywhere: no mass share
    z = next(i for i, r in enumerate(rollouts) if status_of(r) == "scored")
    for t in range(offsets[z], offsets[z] + rollouts[z]["tokens"]):
        methods[1]["absAdvantage"][t] = 0.0
    return {"options": OPTIONS, "rollouts": rollouts, "methods": methods}


def status_of(r):
    label, correct = r["label"], r["correct"]
    if r["tokens"] == 0:
        return "empty"
    if correct:
        return "correct" if label == "correct" else "conflict"
    if label == "unlabelled":
        return "unlabelled"
    if label == "correct":
        return "conflict"
    if label["tokenEnd"] == label["tokenStart"]:
        return "empty_error"
    return "no_prefix" if label["tokenStart"] == 0 or label.get("correctSteps") == 0 else "scored"


def nanmean(x):
    return float(np.mean(x)) if len(x) else math.nan


def per_rollout(inp):
    opts = inp["options"]
    bins, K = opts["bins"], opts["errorBins"]
    lo_mid, hi_mid = opts["middle"]
    out = {}
    for m in inp["methods"]:
        credit = np.asarray(m["credit"], dtype=np.float64)
        mass = np.asarray(m["absAdvantage"], dtype=np.float64)
        cols = {k: [] for k in ["auroc", "massShare", "tokenShare", "before", "on", "after", "middle", "uContrast", "profile", "errorProfile"]}
        o = 0
        for r in inp["rollouts"]:
            T = r["tokens"]
            c = credit[o : o + T]
            a = mass[o : o + T]
            o += T
            t = np.arange(T)
            pos = t / T
            b = (t * bins) // T
            cols["profile"].append([nanmean(c[b == k]) for k in range(bins)])
            inside = (pos >= lo_mid) & (pos < hi_mid)
            mid = nanmean(c[inside])
            cols["middle"].append(mid)
            cols["uContrast"].append(nanmean(c[~inside]) - mid if inside.any() and (~inside).any() else math.nan)
            if status_of(r) != "scored":
                for k in ["auroc", "massShare", "tokenShare", "before", "on", "after"]:
                    cols[k].append(math.nan)
                cols["errorProfile"].append([math.nan] * (2 * K + 1))
                continue
            s, e = r["label"]["tokenStart"], r["label"]["tokenEnd"]
            u = stats.mannwhitneyu(c[s:e], c[:s], alternative="two-sided", method="asymptotic").statistic
            cols["auroc"].append(float(u) / ((e - s) * s))
            total = math.fsum(a)
            cols["massShare"].append(math.fsum(a[s:]) / total if total > 0 else math.nan)
            cols["tokenShare"].append((T - s) / T if total > 0 else math.nan)
            cols["before"].append(nanmean(c[:s]))
            cols["on"].append(nanmean(c[s:e]))
            cols["after"].append(nanmean(c[e:]))
            eb = np.where(t < s, (t * K) // s, np.where(t < e, K, K + 1 + ((t - e) * K) // max(1, T - e)))
            cols["errorProfile"].append([nanmean(c[eb == k]) for k in range(2 * K + 1)])
        out[m["name"]] = {k: [None if (isinstance(v, float) and math.isnan(v)) else v for v in col] if k not in ("profile", "errorProfile")
                          else [[None if math.isnan(x) else x for x in row] for row in col] for k, col in cols.items()}
        out[m["name"]]["degenerate"] = m["degenerate"]
    return out


def fin(x):
    """A finite float, or None (JSON has no NaN)."""
    return float(x) if np.isfinite(x) else None


def mean_sd(x):
    x = [v for v in x if v is not None]
    return {"n": len(x), "mean": float(np.mean(x)) if x else None, "sd": float(np.std(x, ddof=1)) if len(x) > 1 else None}


def tests(d):
    d = np.asarray(d, dtype=np.float64)
    t = stats.ttest_1samp(d, 0.0) if len(d) >= 2 and np.std(d) > 0 else None
    nz = d[d != 0]
    if len(nz) == 0:
        return {"t": None, "pT": None, "wPlus": None, "pWilcoxon": None}
    w = stats.wilcoxon(nz, zero_method="wilcox", correction=False, method="approx")
    ranks = stats.rankdata(np.abs(nz))
    return {
        "t": float(t.statistic) if t else None,
        "pT": float(t.pvalue) if t else None,
        "wPlus": float(ranks[nz > 0].sum()),
        "pWilcoxon": float(w.pvalue),
    }


def aggregates(rollouts, values, K, bins):
    status = [status_of(r) for r in rollouts]
    methods = {}
    for name, v in values.items():
        live = [d == 0 for d in v["degenerate"]]
        pick = lambda col, keep: [x for x, k in zip(col, keep) if k and x is not None]  # noqa: E731
        scored = [s == "scored" and l for s, l in zip(status, live)]
        dscored = [s == "scored" and not l for s, l in zip(status, live)]
        ex = [None if m is None else m - t for m, t in zip(v["massShare"], v["tokenShare"])]
        wrong = {k: mean_sd(pick(v[k] if k != "excess" else ex, scored)) for k in ["auroc", "massShare", "tokenShare", "excess", "before", "on", "after"]}
        dwrong = {k: mean_sd(pick(v[k], dscored)) for k in ["auroc", "massShare"]}
        correct = [r["correct"] and l for r, l in zip(rollouts, live)]
        wr = [(not r["correct"]) and l for r, l in zip(rollouts, live)]
        mw, mc = pick(v["middle"], wr), pick(v["middle"], correct)
        welch = stats.ttest_ind(mw, mc, equal_var=False)
        uc = pick(v["uContrast"], correct)
        methods[name] = {
            "wrong": wrong,
            "degenerateWrong": dwrong,
            "errorProfile": [mean_sd(pick([row[b] for row in v["errorProfile"]], scored)) for b in range(2 * K + 1)],
            "correctProfile": [mean_sd(pick([row[b] for row in v["profile"]], correct)) for b in range(bins)],
            "midChain": {"wrong": mean_sd(mw), "correct": mean_sd(mc), "welchT": fin(welch.statistic), "welchP": fin(welch.pvalue)},
            "uShape": {**mean_sd(uc), **tests(uc)},
        }
    pairs = []
    names = list(values)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            va, vb = values[a], values[b]
            both = [s == "scored" and da == 0 and db == 0 for s, da, db in zip(status, va["degenerate"], vb["degenerate"])]
            for metric in ["auroc", "excess"]:
                def col(v):
                    if metric == "auroc":
                        return v["auroc"]
                    return [None if m is None else m - t for m, t in zip(v["massShare"], v["tokenShare"])]
                d = [x - y for x, y, k in zip(col(va), col(vb), both) if k and x is not None and y is not None]
                pairs.append({"a": a, "b": b, "metric": metric, **mean_sd(d), **tests(d)})
    counts = {}
    for s in status:
        counts[s] = counts.get(s, 0) + 1
    return {"status": counts, "methods": methods, "pairs": pairs}


def write_fixture():
    inp = synthetic()
    values = per_rollout(inp)
    expected = {"values": values, **aggregates(inp["rollouts"], values, OPTIONS["errorBins"], OPTIONS["bins"])}
    os.makedirs(FIXTURES, exist_ok=True)
    with open(os.path.join(FIXTURES, "credit-input.json"), "w") as f:
        json.dump(inp, f)
        f.write("\n")
    with open(os.path.join(FIXTURES, "credit-scipy.json"), "w") as f:
        json.dump(expected, f, allow_nan=False)
        f.write("\n")
    print("wrote credit-input.json and credit-scipy.json in", os.path.normpath(FIXTURES))


def close(a, b, what, worst):
    if b is None:  # SciPy has no answer (zero variance: NaN); ours may give the limit (t 0, p 1)
        return worst
    if a is None:
        raise SystemExit(f"{what}: null in the report, {b} from SciPy")
    dev = abs(a - b) / max(1.0, abs(b))
    if dev > worst[0]:
        worst[:] = [dev, what]
    return worst


def check_report(path):
    try:
        rep = json.load(open(path))
        rep["options"], rep["values"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise SystemExit(f"{path}: not a credit report ({err})")
    K, bins = rep["options"]["errorBins"], rep["options"]["bins"]
    rollouts = [{"tokens": t, "correct": c, "label": "correct" if s == "correct" else ("unlabelled" if s == "unlabelled" else lab or "correct")}
                for t, c, s, lab in zip(rep["rollouts"]["tokens"], rep["rollouts"]["correct"], rep["rollouts"]["status"], rep["rollouts"]["label"])]
    for r, s in zip(rollouts, rep["rollouts"]["status"]):
        if status_of(r) != s and s != "conflict":
            raise SystemExit(f"status {s} disagrees with the label {r['label']}")
    ours = aggregates(rollouts, rep["values"], K, bins)
    worst = [0.0, ""]
    for m in rep["methods"]:
        exp = ours["methods"][m["name"]]
        for k, e in exp["wrong"].items():
            close(m["wrong"][k]["mean"], e["mean"], f"{m['name']} wrong.{k}", worst)
            close(m["wrong"][k]["sd"], e["sd"], f"{m['name']} wrong.{k} sd", worst)
        close(m["midChain"]["difference"]["welch"]["p"], exp["midChain"]["welchP"], f"{m['name']} welch p", worst)
        close(m["uShape"]["test"]["pWilcoxon"], exp["uShape"]["pWilcoxon"], f"{m['name']} U wilcoxon p", worst)
        for b, e in zip(m["correctProfile"], exp["correctProfile"]):
            close(b["mean"], e["mean"], f"{m['name']} profile {b['bin']}", worst)
    for p, e in zip(rep["pairs"], ours["pairs"]):
        close(p["difference"]["mean"], e["mean"], f"{p['a']}-{p['b']} {p['metric']}", worst)
        close(p["test"]["pT"], e["pT"], f"{p['a']}-{p['b']} {p['metric']} t p", worst)
        close(p["test"]["pWilcoxon"], e["pWilcoxon"], f"{p['a']}-{p['b']} {p['metric']} wilcoxon p", worst)
    print(f"largest relative deviation {worst[0]:.3g} ({worst[1] or 'none'})")
    sys.exit(1 if worst[0] > 1e-9 else 0)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        check_report(sys.argv[1])
    else:
        write_fixture()
