"""Flags renamed when the command line took LeRobot's vocabulary (one name per concept, `--output_dir`,
`--policy.path`, `--dataset.num_episodes` ...): an old spelling is refused with the new one named.

`RENAMED[verb][old] = new`; the documentation's "what changed" table is printed from it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_VCODEC = {"--vcodec": "--dataset.rgb_encoder.vcodec"}
_ENV = {
    "--env": "--env.type",
    "--task": "--env.task",
    "--render": "--env.observation_height H --env.observation_width W",
    "--max-episode-steps": "--env.episode_length",
}

RENAMED: dict[str, dict[str, str]] = {
    "demo": {
        **_ENV,
        **_VCODEC,
        "--episodes": "--dataset.num_episodes",
        "--eval-episodes": "--eval.n_episodes",
        "--no-eval": "--eval=false",
        "--out": "--output_dir",
        "--policy-path": "--policy.path",
        "--train": "--steps",
        "--train-batch-size": "--batch_size",
        "--print-urdf": "--print_urdf",
    },
    "eval": {
        **_ENV,
        "--task-id": "--env.task_ids",
        "--task-ids": "--env.task_ids",
        "--policy-path": "--policy.path",
        "--n-episodes": "--eval.n_episodes",
        "--workers": "--eval.batch_size",
        "--batch-size": "--eval.batch_size",
        "--device": "--policy.device",
        "--output-dir": "--output_dir",
        "--out": "--output_dir",
        "-o": "--output_dir",
        "--save-dataset": "--dataset.root",
        "--record": "--record_dir",
        "--startup-timeout": "--startup_timeout_s",
    },
    "convert": {
        **_VCODEC,
        "--out": "--dataset.root",
        "--repo-id": "--dataset.repo_id",
        "--workers": "--num_workers",
        "--ray-address": "--ray_address",
        "--num-shards": "--num_shards",
        "--shard-index": "--shard_index",
        "--push-to-hub": "--dataset.push_to_hub --dataset.repo_id REPO",
        "--no-progress": "--progress=false",
    },
    "merge": {"--out": "--dataset.root", "--repo-id": "--dataset.repo_id"},
    "export": {
        "--out": "--output_dir",
        "--repo-id": "--dataset.repo_id",
        "--episodes": "--dataset.episodes",
        "--no-progress": "--progress=false",
    },
    "record": {
        **_VCODEC,
        "--out": "--output_dir",
        "--all-topics": "--all_topics",
        "--episode-time-s": "--dataset.episode_time_s",
        "--reset-time-s": "--dataset.reset_time_s",
        "--num-episodes": "--dataset.num_episodes",
        "--flush-interval-s": "--flush_interval_s",
        "--convert-to": "--dataset.root",
    },
    "repair": {"--out": "--output_dir", "--in-place": "--in_place"},
    "smoke": {"--timeout": "--timeout_s"},
    "view": {
        "--episode": "--episode_index",
        "--web-port": "--web_port",
        "--grpc-port": "--grpc_port",
        "--memory-limit": "--memory_limit",
        "--max-image-hz": "--max_image_hz",
        "--use-sim-time": "--use_sim_time",
        "--exit-after": "--exit_after_s",
    },
    "virtual-arm": {"--dir": "--output_dir", "--duration": "--duration_s"},
}

_UNRECOGNIZED = re.compile(r"unrecognized arguments: (.*)")


def renamed_flag_hint(verb: str, message: str, argv: Sequence[str] = ()) -> str:
    """`--out is now --output_dir` for the first renamed flag among argparse's unrecognized arguments, or on
    the command line when argparse complained about something else first ('' if none)."""
    table = RENAMED.get(verb, {})
    m = _UNRECOGNIZED.search(message)
    candidates = m.group(1).split() if m else list(argv)
    for token in candidates:
        old = token.split("=", 1)[0]
        if old in table:
            return f"{old} is now {table[old]} (lerobot-ros took LeRobot's flag names)"
    return ""
