"""Record episodes of a contract's topics into one rosbag2 (MCAP) per episode, like lerobot-record.

Runs the episode_recorder node in this process (its flags are its parameters, `lerobot_ros.record.config`).
Automatic mode with --dataset.episode_time_s (record, reset, repeat --dataset.num_episodes times); otherwise
episodes start and stop through the services or the keyboard (--keyboard: right arrow / n = next, left
arrow / r = re-record, Esc / q = stop). With --dataset.root DIR, every kept episode is converted in the
background (`lerobot_ros.dataset.conversion`, one episode at a time, in a worker process) while the next one
records; the parts are merged into one LeRobotDataset at the end.

  lerobot-ros record --contract so101 --output_dir recordings --dataset.episode_time_s 20 --dataset.num_episodes 5
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from lerobot_ros.configs import ParameterError, as_dict, spec_of
from lerobot_ros.configs.cli import add_arguments as add_config_arguments
from lerobot_ros.configs.cli import from_args, given
from lerobot_ros.configs.fields import format_value
from lerobot_ros.record.config import RecordCommandConfig, RecorderConfig

#: the recorder's parameters offered as flags (the others are the node's own tuning: `--ros-args -p ...`)
RECORDER_FLAGS = (
    "contract",
    "topics",
    "all_topics",
    "output_dir",
    "task",
    "compression",
    "flush_interval_s",
    "dataset.episode_time_s",
    "dataset.reset_time_s",
    "dataset.num_episodes",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser, RecorderConfig, only=RECORDER_FLAGS)
    add_config_arguments(parser, RecordCommandConfig)
    parser.add_argument("--ros-args", nargs=argparse.REMAINDER, default=[], help="more ROS arguments for the node")


def ros_arguments(args: argparse.Namespace) -> list[str]:
    """The node's --ros-args: every recorder setting given as a flag, as `-p NAME:=VALUE`."""
    from lerobot_ros.configs import build

    config = build(RecorderConfig, given(args, RecorderConfig))  # checked here: one line for a bad value
    out = ["--ros-args"]
    for name, value in as_dict(config).items():
        if name in given(args, RecorderConfig):
            text = format_value(value) if spec_of(RecorderConfig, name).is_list else _scalar_text(value)
            out += ["-p", f"{name}:={text}"]
    return out + list(args.ros_args or [])


def _scalar_text(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if str(value) else "''"


def run(args: argparse.Namespace) -> int:
    from lerobot_ros.dataset.background import BackgroundConverter

    recorder = given(args, RecorderConfig)
    command = from_args(RecordCommandConfig, args)
    if not (recorder.get("contract") or recorder.get("topics") or recorder.get("all_topics")):
        raise ParameterError("give --contract, --topics or --all_topics")
    if command.dataset_root and not recorder.get("contract"):
        raise ParameterError("--dataset.root needs --contract (the converter maps topics to features with it)")
    if command.dataset_root and Path(command.dataset_root).exists():
        raise ParameterError(
            f"{command.dataset_root} exists already; choose a new --dataset.root (datasets are never appended to)"
        )
    ros_args = ros_arguments(args)
    from lerobot_ros.nodes.episode_recorder_node import EpisodeRecorder
    from lerobot_ros.ros.entry import run_node

    converter = (
        BackgroundConverter(recorder["contract"], command.dataset_root, command.vcodec, log=_stderr)
        if command.dataset_root
        else None
    )
    keyboard = None
    if command.keyboard:
        keyboard = subprocess.Popen(
            [sys.executable, "-m", "lerobot_ros.nodes.episode_keyboard_node"], env=dict(os.environ)
        )
    code = 0
    try:

        def episode_recorder():
            return EpisodeRecorder(on_saved=converter.submit if converter else None)

        run_node(episode_recorder, args=ros_args)
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        if keyboard is not None:
            keyboard.terminate()
            keyboard.wait(timeout=10)
        if converter is not None:
            code = converter.finish() or code
    return code


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
