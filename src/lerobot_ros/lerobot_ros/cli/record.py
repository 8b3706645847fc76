"""Record episodes of a contract's topics into one rosbag2 (MCAP) per episode, like lerobot-record.

Runs the episode_recorder node in this process. Automatic mode with --episode-time-s (record, reset,
repeat --num-episodes times); otherwise episodes start and stop through the services or the keyboard
(--keyboard: right arrow / n = next, left arrow / r = re-record, Esc / q = stop). With --convert-to DIR,
every kept episode is converted in the background (`lerobot-ros convert`, one episode at a time) while
the next one records.
"""

from __future__ import annotations

import argparse
import os
import queue
import subprocess
import sys
import threading


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--contract", help="contract file or shipped name (so101, koch, metaworld ...)")
    parser.add_argument("--topics", nargs="*", default=[], help="topics to record (also `topic:pkg/msg/Type`)")
    parser.add_argument("--all-topics", action="store_true", help="record every topic that has publishers")
    parser.add_argument("--out", default="recordings", help="output directory for episode bags")
    parser.add_argument("--task", default="", help="task description stored with every episode")
    parser.add_argument("--episode-time-s", type=float, default=0.0, help="automatic mode: seconds per episode")
    parser.add_argument("--reset-time-s", type=float, default=0.0, help="automatic mode: seconds between episodes")
    parser.add_argument("--num-episodes", type=int, default=0, help="stop after this many kept episodes (0: no limit)")
    parser.add_argument("--compression", choices=["none", "zstd"], default="none", help="MCAP chunk compression")
    parser.add_argument("--flush-interval-s", type=float, default=0.5,
                        help="close and flush a chunk at least this often (bounds the loss on a crash)")
    parser.add_argument("--keyboard", action="store_true", help="control episodes from this terminal")
    parser.add_argument("--convert-to", metavar="DATASET_DIR",
                        help="convert each kept episode into this LeRobotDataset in the background")
    parser.add_argument("--ros-args", nargs=argparse.REMAINDER, default=[], help="extra ROS arguments")


def ros_arguments(args: argparse.Namespace) -> list[str]:
    params = {
        "output_dir": args.out, "task": args.task, "compression": args.compression,
        "episode_time_s": float(args.episode_time_s), "reset_time_s": float(args.reset_time_s),
        "num_episodes": int(args.num_episodes), "flush_interval_s": float(args.flush_interval_s),
        "all_topics": bool(args.all_topics),
    }
    out = ["--ros-args"]
    if args.contract:
        out += ["-p", f"contract:={args.contract}"]
    if args.topics:
        out += ["-p", "topics:=[" + ",".join(args.topics) + "]"]
    for key, value in params.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        out += ["-p", f"{key}:={text!s}" if text else f"{key}:=''"]
    return out + list(args.ros_args or [])


class BackgroundConverter:
    """Converts finished episodes one at a time with `lerobot-ros convert`, off the recording path."""

    def __init__(self, contract: str, dataset_dir: str):
        self.contract, self.dataset_dir = contract, dataset_dir
        self.jobs: queue.Queue = queue.Queue()
        self.failures: list[str] = []
        self.thread = threading.Thread(target=self._run, name="convert", daemon=True)
        self.thread.start()

    def submit(self, result) -> None:
        self.jobs.put(str(result.path))

    def _run(self) -> None:
        while True:
            bag = self.jobs.get()
            if bag is None:
                return
            cmd = [sys.executable, "-m", "lerobot_ros.cli.main", "convert", bag, "--contract", self.contract,
                   "--out", self.dataset_dir]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
                self.failures.append(f"{bag}: {tail[0]}")
                print(f"conversion of {bag} failed: {tail[0]}", file=sys.stderr, flush=True)
            else:
                print(f"converted {bag} into {self.dataset_dir}", file=sys.stderr, flush=True)

    def finish(self) -> None:
        self.jobs.put(None)
        self.thread.join()


def run(args: argparse.Namespace) -> int:
    if not (args.contract or args.topics or args.all_topics):
        print("error: give --contract, --topics or --all-topics", file=sys.stderr)
        return 2
    if args.convert_to and not args.contract:
        print("error: --convert-to needs --contract (the converter maps topics to features with it)", file=sys.stderr)
        return 2
    from lerobot_ros.cli.main import VERBS

    if args.convert_to and "convert" not in VERBS:
        print("error: --convert-to needs the `lerobot-ros convert` verb, which this install lacks", file=sys.stderr)
        return 2
    from lerobot_ros.nodes.episode_recorder_node import EpisodeRecorder
    from lerobot_ros.ros.entry import run_node

    converter = BackgroundConverter(args.contract, args.convert_to) if args.convert_to else None
    keyboard = None
    if args.keyboard:
        keyboard = subprocess.Popen([sys.executable, "-m", "lerobot_ros.nodes.episode_keyboard_node"],
                                    env=dict(os.environ))
    code = 0
    try:
        def episode_recorder():
            return EpisodeRecorder(on_saved=converter.submit if converter else None)

        run_node(episode_recorder, args=ros_arguments(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        if keyboard is not None:
            keyboard.terminate()
            keyboard.wait(timeout=10)
        if converter is not None:
            converter.finish()
            if converter.failures:
                code = code or 1
    return code
