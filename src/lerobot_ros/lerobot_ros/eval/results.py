"""Episode metrics and `eval_info.json` in the schema `lerobot-eval` writes, reduced the way it reduces them.

Per-step rewards are summed with the same tensor reductions as `lerobot.scripts.lerobot_eval.eval_policy`
(einops over a float64 tensor), so a ROS evaluation and LeRobot's loop that saw the same rewards give
bit-identical sums, not merely close ones.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class EpisodeResult:
    """One evaluated episode. `rewards` and `successes` are per step, up to and including the done step."""

    index: int
    seed: int | None
    rewards: list[float]
    successes: list[bool]
    task: str = ""
    worker: str = ""
    wall_s: float = 0.0
    video_path: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def n_steps(self) -> int:
        return len(self.rewards)

    @property
    def sum_reward(self) -> float:
        return reduce_rewards(self.rewards)[0]

    @property
    def max_reward(self) -> float:
        return reduce_rewards(self.rewards)[1]

    @property
    def success(self) -> bool:
        return bool(any(self.successes))


def reduce_rewards(rewards) -> tuple[float, float]:
    """(sum, max) of one episode's rewards exactly as lerobot-eval computes them (batch of one, masked)."""
    import einops
    import torch

    if len(rewards) == 0:
        return 0.0, 0.0
    reward = torch.from_numpy(np.asarray(rewards, dtype=np.float64)).reshape(1, -1)
    mask = torch.ones_like(reward, dtype=torch.int64)
    total = einops.reduce(reward * mask, "b n -> b", "sum").tolist()[0]
    peak = einops.reduce(reward * mask, "b n -> b", "max").tolist()[0]
    return float(total), float(peak)


def _mean(xs) -> float:
    if not xs:
        return float("nan")
    return float(np.nanmean(np.array(xs, dtype=float)))


def build_eval_info(
    episodes: list[EpisodeResult],
    task_group: str,
    task_id: int,
    eval_s: float,
    extra: dict | None = None,
) -> dict:
    """lerobot-eval's `eval_info.json` (per_task / per_group / overall) plus `per_episode` as eval_policy
    returns it; anything lerobot_ros adds goes under `lerobot_ros` only."""
    episodes = sorted(episodes, key=lambda e: e.index)
    sums = [e.sum_reward for e in episodes]
    maxes = [e.max_reward for e in episodes]
    succ = [e.success for e in episodes]
    videos = [e.video_path for e in episodes if e.video_path]
    n = len(episodes)
    metrics = {
        "sum_rewards": sums,
        "max_rewards": maxes,
        "successes": succ,
        "video_paths": videos,
        "predicted_video_paths": [],
    }
    group = {
        "avg_sum_reward": _mean(sums),
        "avg_max_reward": _mean(maxes),
        "pc_success": _mean(succ) * 100 if succ else float("nan"),
        "n_episodes": n,
        "video_paths": list(videos),
        "predicted_video_paths": [],
    }
    overall = dict(group)
    overall["eval_s"] = float(eval_s)
    overall["eval_ep_s"] = float(eval_s) / max(1, n)
    overall = {k: overall[k] for k in (
        "avg_sum_reward", "avg_max_reward", "pc_success", "n_episodes", "eval_s", "eval_ep_s",
        "video_paths", "predicted_video_paths",
    )}
    info = {
        "per_episode": [
            {"episode_ix": i, "sum_reward": e.sum_reward, "max_reward": e.max_reward, "success": e.success, "seed": e.seed}
            for i, e in enumerate(episodes)
        ],
        "per_task": [{"task_group": task_group, "task_id": task_id, "metrics": metrics}],
        "per_group": {task_group: group},
        "overall": overall,
    }
    info["lerobot_ros"] = {
        "episodes": [
            {"episode_ix": i, "seed": e.seed, "n_steps": e.n_steps, "wall_s": round(e.wall_s, 3), "worker": e.worker,
             "task": e.task, **({"notes": e.notes} if e.notes else {})}
            for i, e in enumerate(episodes)
        ],
        **(extra or {}),
    }
    return info


def write_json_atomic(path: str | os.PathLike, data: dict) -> Path:
    """Write JSON next to `path` and rename it into place: readers never see a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2, default=_json_default)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _json_default(value):
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
