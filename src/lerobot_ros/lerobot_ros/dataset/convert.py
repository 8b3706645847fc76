"""Convert one bag into a LeRobotDataset part: whole episodes or nothing, stoppable between frames.

Runs in a worker process (or in-process with --workers 1). The returned BagEntry is the bag's QA entry.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Generator
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path

from lerobot_ros.bag import BagError, BagReader
from lerobot_ros.bag.episodes import iter_frames, plan_bag
from lerobot_ros.contract import ContractError, load_contract
from lerobot_ros.dataset.lerobot_writer import add_frame, create_dataset, save_episode


@dataclass
class BagJob:
    index: int
    bag: str
    contract: str  # path, reloaded in the worker
    part_root: str
    part_repo_id: str
    task: str | None = None
    strict: bool = False
    vcodec: str = "libsvtav1"


class BagStatus(StrEnum):
    OK = "ok"
    FAILED = "failed"
    STOPPED = "stopped"


@dataclass
class EpisodeEntry:
    """One episode of a bag in the QA report: its size, task, resampler report, and what became of it."""

    index_in_bag: int
    frames: int
    task: str
    warnings: list[str]
    duration_s: float
    streams: dict
    skipped: str | None = None  # why it was not written (--strict)
    written: bool = False
    dataset_episode: int | None = None  # its index in the merged dataset


@dataclass
class BagEntry:
    """One bag's QA entry; `part` is (repo id, root) of the dataset part holding its episodes."""

    bag: str
    status: BagStatus = BagStatus.OK
    error: str | None = None
    episodes: list[EpisodeEntry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    part: tuple[str, str] | None = None
    seconds: float = 0.0

    @property
    def written(self) -> list[EpisodeEntry]:
        return [e for e in self.episodes if e.written]

    def to_dict(self) -> dict:
        """The report's JSON form (unset optional episode keys left out)."""
        out = asdict(self)
        out["status"] = str(self.status)
        out["part"] = list(self.part) if self.part else None
        out["episodes"] = [{k: v for k, v in e.items() if v is not None} for e in out["episodes"]]
        return out


class Stopped(Exception):
    """The run was interrupted (Ctrl-C); the current episode is discarded."""


# What read_bag yields after the entry: a frame, the end of the bag, or a failure part-way through it.
FRAME, END, FAILED = "frame", "end", "failed"


def read_bag(job: BagJob, stop=None) -> Generator:
    """The decoding half of a conversion (no LeRobot writer here, so worker processes stay light).

    Yields the bag's BagEntry first (episodes planned, none written; status failed ends it there), then
    (FRAME, episode position, frame) for the kept episodes in order, then (END,) or (FAILED, error line).
    """
    entry: BagEntry | None  # None once yielded
    entry = BagEntry(job.bag)
    try:
        contract = load_contract(job.contract)
        with BagReader(job.bag) as reader:
            plan = plan_bag(reader, contract, job.task)
            entry.notes = plan.notes
            keep = []
            for i, ep in enumerate(plan.episodes):
                info = EpisodeEntry(
                    i,
                    ep.frames,
                    ep.task,
                    ep.warnings,
                    round(ep.frames / contract.fps, 3),
                    ep.report.to_dict()["streams"],
                )
                if job.strict and ep.warnings:
                    info.skipped = "--strict: " + "; ".join(ep.warnings)
                else:
                    keep.append(i)
                entry.episodes.append(info)
            if not keep:
                if job.strict:
                    raise BagError(job.bag, "--strict: " + "; ".join(w for e in entry.episodes for w in e.warnings))
                raise BagError(job.bag, "no episode to write")
            yield entry
            entry = None
            for e, _k, frame in iter_frames(reader, contract, plan, keep):
                if stop is not None and stop.is_set():
                    return
                yield FRAME, e, frame
        yield (END,)
        return
    except (BagError, ContractError) as exc:
        error = str(exc)
    except Exception as exc:  # unexpected: still one line, the other bags go on
        error = f"{job.bag}: {type(exc).__name__}: {' '.join(str(exc).split())}"
    if entry is not None:  # failed while planning
        entry.status, entry.error = BagStatus.FAILED, error
        yield entry
    else:
        yield FAILED, error


def write_frames(job: BagJob, entry: BagEntry, items, dataset, stop=None, progress=None) -> BagEntry:
    """The encoding half: add the frames of `items` (read_bag's after the entry) to `dataset`, saving each
    episode whole; a failure or Ctrl-C discards the episode in progress, the saved ones stay."""
    started = time.perf_counter()
    current, written = None, 0
    try:
        for item in items:
            if stop is not None and stop.is_set():
                raise Stopped()
            if item[0] == FAILED:
                raise _Failed(item[1])
            if item[0] == END:
                break
            _, e, frame = item
            if current is not None and e != current:
                save_episode(dataset)
                entry.episodes[current].written = True
            current = e
            add_frame(dataset, frame)
            written += 1
            if progress is not None and written % 30 == 0:
                progress(30)
        else:
            raise Stopped()  # the producer ended without END: it was stopped
        if current is not None:
            save_episode(dataset)
            entry.episodes[current].written = True
        if progress is not None:
            progress(written % 30)
    except (Stopped, KeyboardInterrupt):
        entry.status = BagStatus.STOPPED
        entry.error = "interrupted; episodes not yet saved were discarded"
    except (_Failed, BagError, ContractError) as exc:
        entry.status, entry.error = BagStatus.FAILED, str(exc)
    except Exception as exc:
        entry.status = BagStatus.FAILED
        entry.error = f"{job.bag}: {type(exc).__name__}: {' '.join(str(exc).split())}"
    finally:
        if dataset.has_pending_frames():
            dataset.clear_episode_buffer()
    entry.seconds = round(entry.seconds + time.perf_counter() - started, 3)
    return entry


class _Failed(Exception):
    """A failure line that already names the bag."""


def convert_bag(job: BagJob, stop=None, progress=None, dataset=None) -> BagEntry:
    """Convert `job.bag` in this process; returns its QA entry (status, error, episodes written).

    Without `dataset` the bag gets its own dataset part at job.part_root (finalized here); with one
    (sequential runs share a single part) its episodes are appended and the caller finalizes.
    """
    started = time.perf_counter()
    items = read_bag(job, stop)
    entry = next(items)
    if entry.status is not BagStatus.OK:
        entry.seconds = round(time.perf_counter() - started, 3)
        return entry
    own = dataset is None
    if own:
        dataset = create_dataset(Path(job.part_root), job.part_repo_id, load_contract(job.contract), job.vcodec)
    try:
        entry = write_frames(job, entry, items, dataset, stop, progress)
    finally:
        items.close()
        if own:
            try:
                dataset.finalize()
            except Exception as exc:  # a part that cannot be finalized is dropped whole
                entry.status = BagStatus.FAILED
                entry.error = f"{job.bag}: could not finish the dataset part ({exc})"
                for e in entry.episodes:
                    e.written = False
    if own and entry.written and Path(job.part_root).exists():
        entry.part = (job.part_repo_id, job.part_root)
    elif own:
        shutil.rmtree(job.part_root, ignore_errors=True)
    entry.seconds = round(time.perf_counter() - started, 3)
    return entry
