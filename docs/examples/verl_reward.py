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

Environment:
    RLVR_REWARD_URLS       comma-separated server base URLs (default http://127.0.0.1:5000)
    RLVR_REWARD_TIMEOUT_S  seconds to wait for one answer (default 300)
    RLVR_REWARD_RETRIES    attempts per server before giving up (default 3)

Run it directly to grade JSON lines {"data_source", "solution_str", "ground_truth", "extra_info"?} from stdin:
    printf '%s\n' '{"data_source": "math", "solution_str": "so \\\\boxed{2}", "ground_truth": "2"}' \
        | RLVR_REWARD_URLS=http://127.0.0.1:5000 python3 docs/examples/verl_reward.py [--batch]
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request
import zlib

URLS = [u.strip().rstrip("/") for u in os.environ.get("RLVR_REWARD_URLS", "http://127.0.0.1:5000").split(",") if u.strip()]
TIMEOUT_S = float(os.environ.get("RLVR_REWARD_TIMEOUT_S", "300"))
RETRIES = int(os.environ.get("RLVR_REWARD_RETRIES", "3"))
if not URLS:
    raise RuntimeError("RLVR_REWARD_URLS is empty: list the rlvr-reward-server base URLs, comma-separated")


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


def _grade(solution_strs, ground_truths, extra_infos=None):
    """Rewards (0.0 or 1.0) for parallel lists, in order, split over the servers like OpenRLHF does."""
    n = len(solution_strs)
    problems = [_problem(e) for e in (extra_infos if extra_infos is not None else [None] * n)]
    if n == 0:
        return []
    k = min(len(URLS), n)
    size = (n + k - 1) // k
    rewards = []
    for i in range(0, n, size):
        chunk = solution_strs[i : i + size]
        labels = [str(g) for g in ground_truths[i : i + size]]
        # verl hands over the response alone, so the prompt is empty and the whole string is graded.
        payload = {"query": chunk, "prompts": [""] * len(chunk), "labels": labels}
        if any(p is not None for p in problems[i : i + size]):
            payload["problems"] = problems[i : i + size]
        out = _post("/get_reward", payload, i // size)
        rewards.extend(float(r) for r in out["rewards"])
    return rewards


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """verl's per-response hook: 1.0 when the final answer equals ground_truth, else 0.0."""
    start = zlib.crc32(solution_str.encode("utf-8", "replace")) % len(URLS)  # spread single calls over the servers
    payload = {"query": [solution_str], "prompts": [""], "labels": [str(ground_truth)]}
    if _problem(extra_info) is not None:
        payload["problems"] = [_problem(extra_info)]
    out = _post("/get_reward", payload, start)
    return float(out["rewards"][0])


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs):
    """verl's batch reward manager hook: one score per response, in order."""
    return _grade(list(solution_strs), list(ground_truths), list(extra_infos) if extra_infos is not None else None)


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
