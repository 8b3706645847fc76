"""Record episodes of a contract's topics into one rosbag2 (MCAP) per episode, like lerobot-record.

Runs the episode_recorder node in this process. Automatic mode with --episode-time-s (record, reset,
repeat --num-episodes times); otherwise episodes start and stop through the services or the keyboard
(--keyboard: right arrow / n = next, left arrow / r = re-record, Esc / q = stop). With --convert-to DIR,
every kept episode is converted in the background (`lerobot-ros convert`, one episode at a time, in a
child process) while the next one records; the parts are merged into one LeRobotDataset at the end.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import queue
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from lerobot_ros.record.episode_bag_writer import WriterSettings

WRITER_DEFAULTS = WriterSettings()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--contract", help="contract file or shipped name (so101, koch, metaworld ...)")
    parser.add_argument("--topics", nargs="*", default=[], help="topics to record (also `topic:pkg/msg/Type`)")
    parser.add_argument("--all-topics", action="store_true", help="record every topic that has publishers")
    parser.add_argument("--out", default="recordings", help="output directory for episode bags")
    parser.add_argument("--task", default="", help="task description stored with every episode")
    parser.add_argument("--episode-time-s", type=float, default=0.0, help="automatic mode: seconds per episode")
    parser.add_argument("--reset-time-s", type=float, default=0.0, help="automatic mode: seconds between episodes")
    parser.add_argument("--num-episodes", type=int, default=0, help="stop after this many kept episodes (0: no limit)")
    parser.add_argument(
        "--compression",
        choices=WriterSettings.COMPRESSIONS,
        default=WRITER_DEFAULTS.compression,
        help="MCAP chunk compression",
    )
    parser.add_argument(
        "--flush-interval-s",
        type=float,
        default=WRITER_DEFAULTS.flush_interval_s,
        help="close and flush a chunk at least this often (bounds the loss on a crash)",
    )
    parser.add_argument("--keyboard", action="store_true", help="control episodes from this terminal")
    parser.add_argument(
        "--convert-to",
        metavar="DATASET_DIR",
        help="convert each kept episode into this LeRobotDataset in the background",
    )
    parser.add_argument("--vcodec", default=None, help="video codec for --convert-to (lerobot-ros convert's default)")
    parser.add_argument("--ros-args", nargs=argparse.REMAINDER, default=[], help="extra ROS arguments")


def ros_arguments(args: argparse.Namespace) -> list[str]:
    params = {
        "output_dir": args.out,
        "task": args.task,
        "compression": args.compression,
        "episode_time_s": float(args.episode_time_s),
        "reset_time_s": float(args.reset_time_s),
        "num_episodes": int(args.num_episodes),
        "flush_interval_s": float(args.flush_interval_s),
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


def _convert_in_worker(argv: list[str]) -> tuple[int, str]:
    """`lerobot-ros convert ARGV` inside the worker process; its status and what it printed."""
    import contextlib
    import io
    import signal

    from lerobot_ros.cli.main import main

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the recording, not the conversion under way
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, buffer.getvalue()


def _warm_up() -> None:
    """Import LeRobot in the worker while the first episode records."""
    import lerobot.datasets.lerobot_dataset  # noqa: F401


def _merge_in_worker(parts: list[tuple[str, str]], repo_id: str, out: str) -> tuple[int, int]:
    """Merge the one-episode parts into `out` and reload it with LeRobotDataset (episodes, frames)."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from lerobot_ros.dataset.writer import merge_parts

    merge_parts([(r, Path(p)) for r, p in parts], repo_id, Path(out))
    dataset = LeRobotDataset(repo_id, root=out)
    return dataset.num_episodes, dataset.num_frames


class BackgroundConverter:
    """Converts each kept episode into a one-episode dataset part (`lerobot-ros convert`, in a child process,
    one at a time, in one worker process, off the recording path); `finish()` merges the parts into DATASET_DIR and reloads it."""

    def __init__(self, contract: str, dataset_dir: str, vcodec: str | None = None):
        self.contract, self.out = contract, Path(dataset_dir).resolve()
        self.parts_dir = self.out.with_name(f".{self.out.name}.parts")
        self.vcodec = vcodec
        self.jobs: queue.Queue = queue.Queue()
        self.parts: list[tuple[str, Path]] = []
        self.failures: list[str] = []
        # one long-lived worker process: LeRobot is imported once, and the recorder keeps its own core
        self.pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        self.pool.submit(_warm_up)
        self.thread = threading.Thread(target=self._run, name="convert", daemon=True)
        self.thread.start()

    def submit(self, result) -> None:
        self.jobs.put(Path(result.path))

    def _run(self) -> None:
        while True:
            bag = self.jobs.get()
            if bag is None:
                return
            part = self.parts_dir / bag.name
            cmd = [
                sys.executable,
                "-m",
                "lerobot_ros.cli.main",
                "convert",
                str(bag),
                "--contract",
                self.contract,
                "--out",
                str(part),
                "--repo-id",
                f"local/{bag.name}",
                "--no-progress",
            ]
            if self.vcodec:
                cmd += ["--vcodec", self.vcodec]
            try:
                returncode, output = self.pool.submit(_convert_in_worker, cmd[3:]).result()
            except Exception as exc:  # the worker died
                returncode, output = 1, f"{type(exc).__name__}: {exc}"
            if returncode != 0 or not part.is_dir():
                lines = output.strip().splitlines() or ["no output"]
                reason = next((ln.strip() for ln in lines if ln.strip().startswith("error:")), lines[-1])
                self.failures.append(f"{bag.name}: {reason}")
                print(f"conversion of {bag.name} failed: {reason}", file=sys.stderr, flush=True)
            else:
                self.parts.append((f"local/{bag.name}", part))
                print(f"converted {bag.name} in the background ({len(self.parts)} so far)", file=sys.stderr, flush=True)

    def finish(self) -> int:
        """Wait for the queue, merge the parts into the dataset, reload it; 0 when every episode made it."""
        self.jobs.put(None)
        self.thread.join()
        try:
            if not self.parts:
                print("no episode converted; no dataset written", file=sys.stderr)
                return 1
            parts = [(r, str(p)) for r, p in self.parts]
            try:
                episodes, frames = self.pool.submit(
                    _merge_in_worker, parts, f"local/{self.out.name}", str(self.out)
                ).result()
            except Exception as exc:
                print(
                    f"error: merging the converted episodes failed: {exc}; the parts are in {self.parts_dir}",
                    file=sys.stderr,
                )
                return 1
            shutil.rmtree(self.parts_dir, ignore_errors=True)
            print(f"dataset: {self.out} ({episodes} episodes, {frames} frames)", file=sys.stderr)
            return 1 if self.failures else 0
        finally:
            self.pool.shutdown(wait=True)


def run(args: argparse.Namespace) -> int:
    if not (args.contract or args.topics or args.all_topics):
        print("error: give --contract, --topics or --all-topics", file=sys.stderr)
        return 2
    if args.convert_to and not args.contract:
        print("error: --convert-to needs --contract (the converter maps topics to features with it)", file=sys.stderr)
        return 2
    if args.convert_to and Path(args.convert_to).exists():
        print(
            f"error: {args.convert_to} exists already; choose a new --convert-to (datasets are never appended to)",
            file=sys.stderr,
        )
        return 2
    from lerobot_ros.nodes.episode_recorder_node import EpisodeRecorder
    from lerobot_ros.ros.entry import run_node

    converter = BackgroundConverter(args.contract, args.convert_to, args.vcodec) if args.convert_to else None
    keyboard = None
    if args.keyboard:
        keyboard = subprocess.Popen(
            [sys.executable, "-m", "lerobot_ros.nodes.episode_keyboard_node"], env=dict(os.environ)
        )
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
            code = converter.finish() or code
    return code
