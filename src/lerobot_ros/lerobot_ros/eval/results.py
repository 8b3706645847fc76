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
    group: str = ""  # lerobot-eval's task_group (a Meta-World task or difficulty group, a LIBERO suite)
    task_id: int = 0

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


def _aggregate(episodes: list[EpisodeResult]) -> dict:
    """lerobot-eval's per-group aggregate (eval_policy_all's groups_aggregated) of these episodes."""
    sums = [e.sum_reward for e in episodes]
    succ = [e.success for e in episodes]
    videos = [e.video_path for e in episodes if e.video_path]
    return {
        "avg_sum_reward": _mean(sums),
        "avg_max_reward": _mean([e.max_reward for e in episodes]),
        "pc_success": _mean(succ) * 100 if succ else float("nan"),
        "n_episodes": len(episodes),
        "video_paths": videos,
        "predicted_video_paths": [],
    }


def build_eval_info(
    episodes: list[EpisodeResult],
    task_group: str | None = None,
    task_id: int = 0,
    eval_s: float = 0.0,
    extra: dict | None = None,
    tasks: list[tuple[str, int]] | None = None,
) -> dict:
    """lerobot-eval's `eval_info.json` (per_task / per_group / overall, as `eval_policy_all` builds them)
    plus `per_episode` as eval_policy returns it; anything lerobot_ros adds goes under `lerobot_ros` only.

    Episodes carry their (group, task_id); `task_group` / `task_id` set them for a single-task run.
    `tasks` gives the order of per_task (default: as the episodes come); several tasks add their
    task_group / task_id to each per_episode entry.
    """
    if task_group is not None:
        for e in episodes:
            e.group, e.task_id = task_group, task_id
    order = list(tasks) if tasks else list(dict.fromkeys((e.group, e.task_id) for e in episodes))
    by_task = {
        key: sorted((e for e in episodes if (e.group, e.task_id) == key), key=lambda e: e.index) for key in order
    }
    per_task: list[dict]
    groups: dict[str, list[EpisodeResult]]
    per_task, groups = [], {}
    for (group, tid), eps in by_task.items():
        per_task.append(
            {
                "task_group": group,
                "task_id": tid,
                "metrics": {
                    "sum_rewards": [e.sum_reward for e in eps],
                    "max_rewards": [e.max_reward for e in eps],
                    "successes": [e.success for e in eps],
                    "video_paths": [e.video_path for e in eps if e.video_path],
                    "predicted_video_paths": [],
                },
            }
        )
        groups.setdefault(group, []).extend(eps)
    ordered = [e for eps in by_task.values() for e in eps]
    overall = _aggregate(ordered)
    n = len(ordered)
    overall = {
        **{k: overall[k] for k in ("avg_sum_reward", "avg_max_reward", "pc_success", "n_episodes")},
        "eval_s": float(eval_s),
        "eval_ep_s": float(eval_s) / max(1, n),
        "video_paths": overall["video_paths"],
        "predicted_video_paths": [],
    }
    multi = len(by_task) > 1

    def where(e):
        return {"task_group": e.group, "task_id": e.task_id} if multi else {}

    info = {
        "per_episode": [
            {
                "episode_ix": e.index,
                "sum_reward": e.sum_reward,
                "max_reward": e.max_reward,
                "success": e.success,
                "seed": e.seed,
                **where(e),
            }
            for e in ordered
        ],
        "per_task": per_task,
        "per_group": {g: _aggregate(eps) for g, eps in groups.items()},
        "overall": overall,
    }
    info["lerobot_ros"] = {
        "episodes": [
            {
                "episode_ix": e.index,
                **where(e),
                "seed": e.seed,
                "n_steps": e.n_steps,
                "wall_s": round(e.wall_s, 3),
                "worker": e.worker,
                "task": e.task,
                **({"notes": e.notes} if e.notes else {}),
            }
            for e in ordered
        ],
        **(extra or {}),
    }
    return info


def write_json_atomic(path: str | os.PathLike, data: dict) -> Path:
    """Write JSON next to `path` and rename it into place: readers never see a half-written file. NaN (a mean
    over no episodes) is written as null: `NaN` is not JSON, and strict readers (jq, JavaScript) refuse it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(_nan_to_none(data), f, indent=2, default=_json_default, allow_nan=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _nan_to_none(value):
    """A copy of nested dicts / lists / tuples with float NaN (Python or numpy) replaced by None."""
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nan_to_none(v) for v in value]
    if isinstance(value, (float, np.floating)) and math.isnan(value):
        return None
    return value


def _json_default(value):
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
