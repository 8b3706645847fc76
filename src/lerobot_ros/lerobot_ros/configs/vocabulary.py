"""The project's vocabulary: one public name for each concept a user types, wherever they type it.

A command-line flag is `--NAME`, a node parameter and a launch argument are `NAME` (ROS 2 parameters and
launch arguments take dots as they are). Where LeRobot's command lines have a name for the concept, it is
LeRobot's (`--policy.path`, `--dataset.repo_id`, `--eval.n_episodes` ...), spelled as LeRobot spells flags:
underscores inside words, dots for groups.

`CONCEPTS` is the table the documentation prints (docs/reference/vocabulary.md) and that
tests/.../test_vocabulary.py holds every surface to: no flag, parameter or launch argument may use a
name listed under `not_names`, and no two surfaces may spell the same words differently (`output-dir` and
`output_dir`, `policy_path` and `policy.path`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Concept:
    name: str  # the one public name
    meaning: str
    lerobot: str = ""  # LeRobot's own flag for it, when LeRobot has one
    not_names: tuple[str, ...] = ()  # other names people reach for (some were ours before): none may be used


CONCEPTS: tuple[Concept, ...] = (
    Concept(
        "policy.path",
        "a pretrained policy folder (what lerobot-train and save_pretrained write)",
        "--policy.path",
        ("policy_path", "pretrained_path", "pretrained_policy_path", "checkpoint"),
    ),
    Concept("policy.device", "the torch device the policy runs on", "--policy.device", ("policy_device", "device")),
    Concept("dataset.repo_id", "a dataset's repo id (namespace/name)", "--dataset.repo_id", ("repo_id", "repo")),
    Concept(
        "dataset.root",
        "a LeRobotDataset folder written or read",
        "--dataset.root",
        ("convert_to", "save_dataset", "dataset_dir", "dataset_root"),
    ),
    Concept(
        "output_dir",
        "a folder of outputs that is not a dataset (bags, eval results, logs)",
        "--output_dir",
        ("out", "output", "outdir", "out_dir", "dir", "output_folder"),
    ),
    Concept(
        "dataset.num_episodes",
        "how many episodes to record",
        "--dataset.num_episodes (lerobot-record)",
        ("num_episodes", "episodes_to_record"),
    ),
    Concept(
        "eval.n_episodes",
        "how many episodes to evaluate",
        "--eval.n_episodes (lerobot-eval)",
        ("n_episodes", "eval_episodes", "num_eval_episodes"),
    ),
    Concept("dataset.episodes", "which episodes (indices) of a dataset", "--dataset.episodes", ("episode_indices",)),
    Concept("episode_index", "one episode of a dataset", "--episode-index (lerobot-dataset-viz)", ("episode",)),
    Concept(
        "dataset.episode_time_s",
        "how long one recorded episode lasts",
        "--dataset.episode_time_s",
        ("episode_time_s", "episode_duration_s"),
    ),
    Concept("dataset.reset_time_s", "the pause between recorded episodes", "--dataset.reset_time_s", ("reset_time_s",)),
    Concept(
        "fps", "the rate of a loop or a stream", "--fps (lerobot-teleoperate), --dataset.fps", ("rate_hz", "rate", "hz")
    ),
    Concept(
        "task",
        "the task instruction (language) stored with episodes and given to VLAs",
        "--task (lerobot-rollout), --dataset.single_task",
        ("policy_task", "record_task", "instruction", "single_task"),
    ),
    Concept("contract", "the topic <-> feature contract (a YAML file or a shipped name)", "", ("contract_path",)),
    Concept("env.type", "the simulator family", "--env.type", ("env_type", "sim", "simulator")),
    Concept(
        "env.task",
        "the simulator's task (a Meta-World task, a LIBERO suite, an SO-101 scene)",
        "--env.task",
        ("env_task", "suite", "scene_task"),
    ),
    Concept("env.task_ids", "LIBERO task ids within a suite", "--env.task_ids", ("task_ids", "task_id")),
    Concept(
        "env.observation_height",
        "the height of rendered camera images",
        "--env.observation_height",
        ("render_height", "render"),
    ),
    Concept(
        "env.observation_width", "the width of rendered camera images", "--env.observation_width", ("render_width",)
    ),
    Concept(
        "env.episode_length",
        "the step limit of a simulated episode",
        "--env.episode_length",
        ("max_episode_steps", "max_steps"),
    ),
    Concept("seed", "the random seed (of the first episode)", "--seed", ("start_seed", "random_seed")),
    Concept("eval.batch_size", "simulators evaluated in parallel", "--eval.batch_size", ("workers", "batch_size_eval")),
    Concept("robot.type", "the LeRobot robot type", "--robot.type", ("robot_type",)),
    Concept("robot.port", "the robot's serial port", "--robot.port", ("follower_port",)),
    Concept("robot.id", "the LeRobot robot id (names its calibration file)", "--robot.id", ("robot_id",)),
    Concept("teleop.type", "the LeRobot teleoperator type", "--teleop.type", ("teleop_type",)),
    Concept("teleop.port", "the teleoperator's serial port", "--teleop.port", ("leader_port",)),
    Concept("teleop.id", "the LeRobot teleoperator id", "--teleop.id", ("teleop_id", "leader_id")),
    Concept(
        "dataset.rgb_encoder.vcodec",
        "the video codec of a dataset's camera streams",
        "--dataset.rgb_encoder.vcodec",
        ("vcodec",),
    ),
    Concept(
        "dataset.push_to_hub",
        "upload a finished dataset to the Hugging Face Hub",
        "--dataset.push_to_hub",
        ("push_to_hub",),
    ),
)

#: Not concepts of the table but allowed to share words with one: the motor bus's own serial port (a raw bus
#: is not a LeRobot robot), a LIBERO task index of one bridge (`env.task_id`, one of `env.task_ids`).
SEPARATE_NAMES = frozenset({"port", "env.task_id"})


def words(name: str) -> str:
    """A name with its separators gone: `--output-dir`, `output_dir` and `output.dir` are the same words."""
    return re.sub(r"[-_.]", "", name.lstrip("-").lower())


def by_name() -> dict[str, Concept]:
    return {c.name: c for c in CONCEPTS}


def markdown_table() -> str:
    """The vocabulary as the documentation shows it."""
    rows = [
        "| concept | name (flag `--NAME`, parameter and launch argument `NAME`) | LeRobot | not |",
        "|---|---|---|---|",
    ]
    for c in CONCEPTS:
        nots = ", ".join(f"`{n}`" for n in c.not_names)
        rows.append(f"| {c.meaning} | `{c.name}` | {f'`{c.lerobot}`' if c.lerobot else '-'} | {nots} |")
    return "\n".join(rows)


class Surface(Protocol):
    """A place a user types a name: its kind ("flag", "launch argument", ...), where it is, and the name."""

    @property
    def kind(self) -> str: ...
    @property
    def where(self) -> str: ...
    @property
    def name(self) -> str: ...


def mismatches(surfaces: Iterable[Surface]) -> list[str]:
    """What breaks the vocabulary among `surfaces` (objects with `kind`, `where`, `name`): a name people reach
    for instead of a concept's own, and words spelled two ways. One line each; [] when all is well."""
    found = []
    canonical = {c.name for c in CONCEPTS}
    # by words, so `--out-dir` is caught as `out_dir`; a not-name with the concept's own words is the spelling
    # check's (below)
    forbidden = {words(n): c for c in CONCEPTS for n in c.not_names if words(n) != words(c.name)}
    spellings: dict[str, dict[str, list[str]]] = {}
    for s in surfaces:
        name = s.name.lstrip("-")
        if name in SEPARATE_NAMES:
            continue
        concept = forbidden.get(words(name))
        if concept is not None and name not in canonical:
            found.append(
                f"{s.kind} {s.name!r} of {s.where}: the concept '{concept.meaning}' is named {concept.name!r} everywhere"
            )
        spellings.setdefault(words(name), {}).setdefault(name, []).append(f"{s.kind} of {s.where}")
    for variants in spellings.values():
        if len(variants) > 1:
            parts = "; ".join(f"{name!r} ({', '.join(sorted(set(w))[:3])})" for name, w in sorted(variants.items()))
            found.append(f"one name spelled {len(variants)} ways: {parts}")
    return found
