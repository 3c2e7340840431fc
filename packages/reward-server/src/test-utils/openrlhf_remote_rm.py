"""The client side of OpenRLHF's remote reward model, as its experience maker drives it (requests + torch),
for the reward-server tests: the rollout batch is split into one contiguous chunk per URL of --remote_rm_url, each
chunk is POSTed as {"query", "prompts", "labels"}, and rewards, scores and every extra_logs key are turned into
tensors and concatenated in URL order. Reads {"urls", "query", "prompts", "labels"} as JSON on stdin; prints the
concatenated results as JSON. Written for the tests after OpenRLHF's remote_rm_utils / experience_maker; not a copy.
"""

import json
import sys
import time

import requests
import torch


def request_api_wrapper(url, data, try_max_times=5):
    for _ in range(try_max_times):
        try:
            response = requests.post(url=url, json=data, headers={"Content-Type": "application/json"}, timeout=180)
            response.raise_for_status()
            return response.json()
        except requests.RequestException as e:
            print(f"Request error: {e}", file=sys.stderr)
        time.sleep(1)
    raise Exception(f"Request error for {try_max_times} times")


def main():
    job = json.load(sys.stdin)
    urls, queries, prompts, labels = job["urls"], job["query"], job["prompts"], job["labels"]
    batch_size = (len(queries) + len(urls) - 1) // len(urls)
    infos = []
    for i, url in enumerate(urls):
        s, e = i * batch_size, min((i + 1) * batch_size, len(queries))
        info = request_api_wrapper(url, {"query": queries[s:e], "prompts": prompts[s:e], "labels": labels[s:e]})
        infos.append({
            "rewards": torch.tensor(info["rewards"], dtype=torch.float),
            "scores": torch.tensor(info["scores"], dtype=torch.float),
            "extra_logs": {k: torch.tensor(v, dtype=torch.float) for k, v in info["extra_logs"].items()},
        })
    rewards = torch.cat([x["rewards"] for x in infos], dim=0)
    scores = torch.cat([x["scores"] for x in infos], dim=0)
    logs = {k: torch.cat([x["extra_logs"][k] for x in infos], dim=0) for k in infos[0]["extra_logs"]}
    assert all(v.shape == rewards.shape for v in logs.values()), "every extra_logs entry must have one value per sample"
    print(json.dumps({
        "rewards": rewards.tolist(),
        "scores": scores.tolist(),
        "extra_logs_mean": {k: v.mean().item() for k, v in logs.items()},
    }))


if __name__ == "__main__":
    main()
