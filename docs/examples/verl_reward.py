"""verl custom reward function that grades with rlvr-reward-server (standard library only).

Start one or more servers (`npx rlvr-reward-server --host 0.0.0.0 --port 5000`), list them in
RLVR_REWARD_URLS, and point verl at this file:

    export RLVR_REWARD_URLS=http://rm-0:5000,http://rm-1:5000
    python3 -m verl.trainer.main_ppo ... \
        custom_reward_function.path=docs/examples/verl_reward.py \
        custom_reward_function.name=compute_score

verl's default (naive) reward manager calls compute_score once per response. With
`reward_model.reward_manager=batch` and `custom_reward_function.name=compute_score_batch`
the whole batch goes out as one request per server instead.

The problem statement, where a row's extra_info carries it as "problem" (or "question", as verl's
GSM8K and MATH preprocessing scripts write it), is sent along: the unit, rounding and options it
asks for then decide the grade (docs/grader-contract.md).

The gold answer may come in verl's common shapes (`_gold_texts`): a string; a GSM8K solution ending
in "#### 72" (the text after the last "####", thousands commas removed); a number (72, 0.5, numpy
scalars); a dict with "ground_truth" or "answer" (a whole `reward_model` entry); a list or array of
one item. A list of several is ambiguous, so RLVR_REWARD_LIST_GOLD must say what it means. None,
an empty string, a boolean or any other shape raises ValueError naming the row and its data_source:
a gold that cannot be read must stop the run, not score 0 silently.

Environment:
    RLVR_REWARD_URLS       comma-separated server base URLs (default http://127.0.0.1:5000)
    RLVR_REWARD_TIMEOUT_S  seconds to wait for one answer (default 300)
    RLVR_REWARD_RETRIES    attempts per server before giving up (default 3)
    RLVR_REWARD_LIST_GOLD  a ground_truth list of several items: "any" (alternatives: 1.0 when the
                           answer equals one of them) or "all" (one answer of several parts, joined
                           with ", " as rlvr's olympiadbench preset does); unset: ValueError

Run it directly to grade JSON lines {"data_source", "solution_str", "ground_truth", "extra_info"?} from stdin:
    printf '%s\n' '{"data_source": "math", "solution_str": "so \\\\boxed{2}", "ground_truth": "2"}' \
        | RLVR_REWARD_URLS=http://127.0.0.1:5000 python3 docs/examples/verl_reward.py [--batch]
"""

import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
import zlib

URLS = [u.strip().rstrip("/") for u in os.environ.get("RLVR_REWARD_URLS", "http://127.0.0.1:5000").split(",") if u.strip()]
TIMEOUT_S = float(os.environ.get("RLVR_REWARD_TIMEOUT_S", "300"))
RETRIES = int(os.environ.get("RLVR_REWARD_RETRIES", "3"))
LIST_GOLD = os.environ.get("RLVR_REWARD_LIST_GOLD", "")
if not URLS:
    raise RuntimeError("RLVR_REWARD_URLS is empty: list the rlvr-reward-server base URLs, comma-separated")
if LIST_GOLD not in ("", "any", "all"):
    raise RuntimeError(f"RLVR_REWARD_LIST_GOLD must be 'any' or 'all' (got {LIST_GOLD!r})")


def _post(path, payload, start):
    """POSTs JSON to one server, moving on to the next one on connection errors and 5xx; a 4xx is a bug: raise."""
    body = json.dumps(payload).encode("utf-8")
    last = None
    for attempt in range(RETRIES * len(URLS)):
        url = URLS[(start + attempt) % len(URLS)] + path
        request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as err:
            detail = err.read().decode("utf-8", "replace")
            if err.code < 500:
                raise ValueError(f"{url} refused the request ({err.code}): {detail}") from None
            last = f"{url}: {err.code} {detail}"
        except (urllib.error.URLError, OSError) as err:  # refused, reset, timed out
            last = f"{url}: {err}"
        if (attempt + 1) % len(URLS) == 0:
            time.sleep(0.5 * (attempt + 1) / len(URLS))
    raise RuntimeError(f"no rlvr-reward-server answered after {RETRIES} rounds over {len(URLS)} URL(s); last error: {last}")


def _problem(extra_info):
    """The problem statement of a row: extra_info["problem"], else extra_info["question"]; None when neither is text."""
    if isinstance(extra_info, dict):
        for key in ("problem", "question"):
            if isinstance(extra_info.get(key), str):
                return extra_info[key]
    return None


def _gold_texts(data_source, ground_truth, row=None):
    """The gold answer(s) of one row as text: one string, or several alternatives (RLVR_REWARD_LIST_GOLD=any).

    Raises ValueError naming the row and its data_source for a gold that cannot be read, so that a dataset in an
    unexpected shape stops the run instead of scoring every response 0.
    """
    where = f"{'' if row is None else f'row {row}, '}data_source {data_source!r}"
    g = ground_truth
    if hasattr(g, "tolist") and not isinstance(g, (str, bytes)):  # numpy arrays and scalars (verl reads parquet)
        g = g.tolist()
    if isinstance(g, dict):
        key = next((k for k in ("ground_truth", "answer") if k in g), None)
        if key is None:
            raise ValueError(f"{where}: ground_truth is a dict without 'ground_truth' or 'answer' (keys: {sorted(map(str, g))})")
        return _gold_texts(data_source, g[key], row)
    if isinstance(g, (list, tuple)):
        if len(g) == 1:
            return _gold_texts(data_source, g[0], row)
        if len(g) == 0:
            raise ValueError(f"{where}: ground_truth is an empty list")
        parts = [t for item in g for t in _gold_texts(data_source, item, row)]
        if LIST_GOLD == "any":
            return parts
        if LIST_GOLD == "all":
            return [", ".join(parts)]
        raise ValueError(
            f"{where}: ground_truth is a list of {len(g)} answers {g!r:.120}; set RLVR_REWARD_LIST_GOLD=any if they "
            "are alternatives (any one is right) or =all if they are the parts of one answer"
        )
    if isinstance(g, bool) or g is None:
        raise ValueError(f"{where}: ground_truth is {g!r}, not an answer (check the dataset's reward_model.ground_truth)")
    if isinstance(g, (int, float)):
        if g != g or g in (float("inf"), float("-inf")):
            raise ValueError(f"{where}: ground_truth is {g!r}, not an answer")
        return [repr(g) if isinstance(g, float) else str(g)]
    if isinstance(g, bytes):
        g = g.decode("utf-8")
    if not isinstance(g, str):
        raise ValueError(f"{where}: ground_truth of type {type(g).__name__} is not an answer (a string, number, list or dict)")
    if "####" in g:
        # A raw GSM8K solution ("... #### 1,200"): the answer is after the last "####", as verl's gsm8k scorer reads it.
        g = g[g.rindex("####") + 4 :].strip()
        if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", g):  # "1,200" -> "1200", as rlvr's gsm8k preset reads it
            g = g.replace(",", "")
    if not g.strip():
        raise ValueError(f"{where}: ground_truth is empty")
    return [g]


def _grade(solution_strs, ground_truths, extra_infos=None, data_sources=None, start=None):
    """Rewards (0.0 or 1.0) for parallel lists, in order, split over the servers like OpenRLHF does.

    A row with several alternative golds is sent once per alternative and scores the best of them.
    """
    n = len(solution_strs)
    sources = data_sources if data_sources is not None else [None] * n
    problems = [_problem(e) for e in (extra_infos if extra_infos is not None else [None] * n)]
    golds = [_gold_texts(sources[i], ground_truths[i], i if n > 1 else None) for i in range(n)]
    owner = [i for i in range(n) for _ in golds[i]]  # item -> row
    items = [(solution_strs[i], label, problems[i]) for i in range(n) for label in golds[i]]
    m = len(items)
    if m == 0:
        return []
    k = min(len(URLS), m)
    size = (m + k - 1) // k
    scores = []
    for j in range(0, m, size):
        chunk = items[j : j + size]
        # verl hands over the response alone, so the prompt is empty and the whole string is graded.
        payload = {"query": [c[0] for c in chunk], "prompts": [""] * len(chunk), "labels": [c[1] for c in chunk]}
        if any(c[2] is not None for c in chunk):
            payload["problems"] = [c[2] for c in chunk]
        out = _post("/get_reward", payload, j // size if start is None else start)
        scores.extend(float(r) for r in out["rewards"])
    rewards = [0.0] * n
    for item, row in enumerate(owner):
        rewards[row] = max(rewards[row], scores[item])
    return rewards


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """verl's per-response hook: 1.0 when the final answer equals ground_truth, else 0.0."""
    start = zlib.crc32(solution_str.encode("utf-8", "replace")) % len(URLS)  # spread single calls over the servers
    return _grade([solution_str], [ground_truth], [extra_info], [data_source], start)[0]


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs):
    """verl's batch reward manager hook: one score per response, in order."""
    return _grade(
        list(solution_strs),
        list(ground_truths),
        list(extra_infos) if extra_infos is not None else None,
        list(data_sources) if data_sources is not None else None,
    )


def main():
    rows = [json.loads(line) for line in sys.stdin if line.strip()]
    if "--batch" in sys.argv[1:]:
        scores = compute_score_batch(
            [r.get("data_source") for r in rows],
            [r["solution_str"] for r in rows],
            [r["ground_truth"] for r in rows],
            [r.get("extra_info") for r in rows],
        )
    else:
        scores = [compute_score(r.get("data_source"), r["solution_str"], r["ground_truth"], r.get("extra_info")) for r in rows]
    for s in scores:
        print(json.dumps(s))


if __name__ == "__main__":
    main()
