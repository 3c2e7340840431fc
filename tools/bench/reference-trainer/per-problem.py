#!/usr/bin/python3
"""Where a comparison's differences come from, problem by problem: an exploratory reading of the per-problem counts
an `rlvr compare` JSON keeps (compare.json, or merge-compare.mjs --json).

    /usr/bin/python3 tools/bench/reference-trainer/per-problem.py FILE.json --baseline dr-grpo [--bins 0,.2,.4,.6,.8,1]

Every seed evaluates the same held-out problems, and the runs of a seed share their step-0 evaluation. A problem's
difficulty is its step-0 accuracy pooled over every seed (n samples x seeds), so it does not depend on any arm's
training. Per difficulty bin and estimator: the problems in the bin, the mean step-0 and final accuracy (points, mean
over seeds), and against the baseline the per-seed difference of the bin's final accuracy, as mean and SE over the
seeds (the seed is the unit: problems within a seed are not independent draws). Also, per estimator against the
baseline, the problems that got better or worse by at least --flip of the n samples in the final evaluation, summed
over seeds. No p-values: the bins are looked at after the fact; the tests are paired.py's.
"""

import argparse
import json
import math

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--bins", default="0,.2,.4,.6,.8,1")
    ap.add_argument("--flip", type=int, default=4, help="a change of at least this many of the n samples counts")
    a = ap.parse_args()
    doc = json.load(open(a.file))
    edges = [float(x) for x in a.bins.split(",")]

    runs = {}  # estimator -> seed -> (step-0 counts, final counts, n)
    for r in doc["runs"]:
        ev = r["evals"]
        if "correct" not in ev[0]:
            raise SystemExit(f"{a.file}: run {r['estimator']} seed {r['seed']} has no per-problem counts")
        runs.setdefault(r["estimator"], {})[r["seed"]] = (np.array(ev[0]["correct"]), np.array(ev[-1]["correct"]), ev[-1]["n"])
    if a.baseline not in runs:
        raise SystemExit(f"{a.file}: no runs of the baseline {a.baseline}")
    estimators = [e for e in doc.get("estimators", runs.keys()) if e in runs]
    seeds = sorted(set.intersection(*(set(runs[e]) for e in estimators)))
    base = runs[a.baseline]
    for e in estimators:
        for s in seeds:
            if not np.array_equal(runs[e][s][0], base[s][0]):
                raise SystemExit(f"{e} seed {s}: its step-0 counts differ from {a.baseline}'s: not pairs")
    n = base[seeds[0]][2]
    start = np.mean([base[s][0] for s in seeds], axis=0) / n  # per problem, pooled over seeds
    bins = np.digitize(start, edges[1:-1], right=False)
    print(f"{len(seeds)} seeds ({', '.join(map(str, seeds))}), {len(start)} problems x {n} samples; difficulty = step-0 accuracy")
    print(f"pooled over the seeds; final - {a.baseline} is mean ± SE over seeds (points). Exploratory: no tests.\n")
    header = f"{'step-0 accuracy':<16} {'problems':>8} {'step 0':>7} " + " ".join(f"{e:>22}" for e in estimators)
    print(header)
    for b in range(len(edges) - 1):
        m = bins == b
        if not m.any():
            continue
        lo, hi = edges[b], edges[b + 1]
        s0 = 100 * np.mean([base[s][0][m].mean() / n for s in seeds])
        cells = []
        for e in estimators:
            fin = np.array([runs[e][s][1][m].mean() / n for s in seeds]) * 100
            if e == a.baseline:
                cells.append(f"{fin.mean():6.1f}%" + " " * 15)
            else:
                d = fin - np.array([base[s][1][m].mean() / n for s in seeds]) * 100
                se = d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else float("nan")
                cells.append(f"{fin.mean():6.1f}% ({d.mean():+5.2f} ± {se:4.2f})")
        print(f"{f'{lo:.0%}-{hi:.0%}':<16} {int(m.sum()):>8} {s0:6.1f}% " + " ".join(f"{c:>22}" for c in cells))
    print(f"\nproblems better / worse than {a.baseline} by >= {a.flip} of {n} samples at the end, summed over the seeds:")
    for e in estimators:
        if e == a.baseline:
            continue
        d = np.concatenate([runs[e][s][1] - base[s][1] for s in seeds])
        print(f"  {e:<18} better {int((d >= a.flip).sum()):>5}   worse {int((d <= -a.flip).sum()):>5}   (of {len(d)})")


if __name__ == "__main__":
    main()
