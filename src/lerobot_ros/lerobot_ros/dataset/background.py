"""Convert each kept episode while the next one records, then merge the episodes into one dataset.

`BackgroundConverter.submit(result)` queues a saved episode bag; one worker process (spawned, so LeRobot is
imported once and off the recorder's process) converts each into a one-episode dataset part with
`lerobot_ros.dataset.conversion.convert`; `finish()` merges the parts into the dataset folder with
`lerobot_ros.dataset.merge.merge` and reloads it. A failed episode is named with its one-line reason and the
others still make the dataset.
"""

from __future__ import annotations

import multiprocessing
import queue
import shutil
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def _convert_in_worker(bag: str, contract: str, part: str, vcodec: str | None) -> tuple[bool, str]:
    """One episode bag -> one dataset part, in the worker process: (converted, why not)."""
    import signal

    from lerobot_ros.conventions.errors import UserError
    from lerobot_ros.dataset.config import DEFAULT_VCODEC, ConvertConfig
    from lerobot_ros.dataset.converter import convert

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the recording, not the conversion under way
    cfg = ConvertConfig(
        bags=[bag],
        contract=contract,
        root=part,
        repo_id=f"local/{Path(bag).name}",
        vcodec=vcodec or DEFAULT_VCODEC,
        progress=False,
    )
    try:
        result = convert(cfg)
    except (UserError, OSError) as exc:
        return False, str(exc)
    if result.ok:
        return True, ""
    errors = [e.error for e in result.entries if e.error] + [
        f"episode {ep.index_in_bag}: {ep.skipped}" for e in result.entries for ep in e.episodes if ep.skipped
    ]
    return False, errors[0] if errors else "no episode converted"


def _warm_up() -> None:
    """Import LeRobot in the worker while the first episode records."""
    import lerobot.datasets.lerobot_dataset  # noqa: F401


def _merge_in_worker(parts: list[str], repo_id: str, out: str) -> tuple[int, int]:
    """Merge the one-episode parts into `out` and reload it with LeRobotDataset (episodes, frames)."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from lerobot_ros.dataset.config import MergeConfig
    from lerobot_ros.dataset.merge import merge

    merge(MergeConfig(parts=parts, root=out, repo_id=repo_id))
    dataset = LeRobotDataset(repo_id, root=out)
    return dataset.num_episodes, dataset.num_frames


class BackgroundConverter:
    """Converts each kept episode into a one-episode dataset part, one at a time, in one worker process, off
    the recording path; `finish()` merges the parts into `dataset_dir` and reloads it."""

    def __init__(self, contract: str, dataset_dir: str, vcodec: str | None = None, log: Callable[[str], None] = print):
        self.contract, self.out = contract, Path(dataset_dir).resolve()
        self.parts_dir = self.out.with_name(f".{self.out.name}.parts")
        self.vcodec, self.log = vcodec, log
        self.jobs: queue.Queue = queue.Queue()
        self.parts: list[Path] = []
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
            try:
                ok, reason = self.pool.submit(
                    _convert_in_worker, str(bag), self.contract, str(part), self.vcodec
                ).result()
            except Exception as exc:  # the worker died
                ok, reason = False, f"{type(exc).__name__}: {exc}"
            if not ok or not part.is_dir():
                self.failures.append(f"{bag.name}: {reason}")
                self.log(f"conversion of {bag.name} failed: {reason}")
            else:
                self.parts.append(part)
                self.log(f"converted {bag.name} in the background ({len(self.parts)} so far)")

    def finish(self) -> int:
        """Wait for the queue, merge the parts into the dataset, reload it; 0 when every episode made it."""
        self.jobs.put(None)
        self.thread.join()
        try:
            if not self.parts:
                self.log("no episode converted; no dataset written")
                return 1
            try:
                episodes, frames = self.pool.submit(
                    _merge_in_worker, [str(p) for p in self.parts], f"local/{self.out.name}", str(self.out)
                ).result()
            except Exception as exc:
                self.log(f"merging the converted episodes failed: {exc}; the parts are in {self.parts_dir}")
                return 1
            shutil.rmtree(self.parts_dir, ignore_errors=True)
            self.log(f"dataset: {self.out} ({episodes} episodes, {frames} frames)")
            return 1 if self.failures else 0
        finally:
            self.pool.shutdown(wait=True)
