"""Convert one bag into a LeRobotDataset part: whole episodes or nothing, stoppable between frames.

Runs in a worker process (or in-process with --workers 1). The returned dict is the bag's QA entry.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from lerobot_ros.bag import BagError, BagReader
from lerobot_ros.bag.episodes import iter_frames, plan_bag
from lerobot_ros.contract import ContractError, load_contract
from lerobot_ros.dataset.writer import add_frame, create_dataset, save_episode


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


class Stopped(Exception):
    """The run was interrupted (Ctrl-C); the current episode is discarded."""


def convert_bag(job: BagJob, stop=None, progress=None, dataset=None) -> dict:
    """Convert `job.bag`; returns its QA entry: status ok|failed|stopped, error, episodes written (with reports).

    Without `dataset` the bag gets its own dataset part at job.part_root (finalized here); with one
    (sequential runs share a single part) its episodes are appended and the caller finalizes.
    """
    own = dataset is None
    started = time.perf_counter()
    entry = {"bag": job.bag, "status": "ok", "error": None, "episodes": [], "notes": [], "part": None}
    try:
        contract = load_contract(job.contract)
        with BagReader(job.bag) as reader:
            plan = plan_bag(reader, contract, job.task)
            entry["notes"] = plan.notes
            keep = []
            for i, ep in enumerate(plan.episodes):
                info = {"index_in_bag": i, "frames": ep.frames, "task": ep.task, "warnings": ep.warnings,
                        "duration_s": round(ep.frames / contract.fps, 3), "streams": ep.report.to_dict()["streams"]}
                if job.strict and ep.warnings:
                    info["skipped"] = "--strict: " + "; ".join(ep.warnings)
                else:
                    keep.append(i)
                entry["episodes"].append(info)
            if not keep:
                if job.strict:
                    raise BagError(job.bag, "--strict: " + "; ".join(w for e in entry["episodes"] for w in e["warnings"]))
                raise BagError(job.bag, "no episode to write")
            if own:
                dataset = create_dataset(Path(job.part_root), job.part_repo_id, contract, job.vcodec)
            current, written = None, 0
            for e, _k, frame in iter_frames(reader, contract, plan, keep):
                if stop is not None and stop.is_set():
                    raise Stopped()
                if current is not None and e != current:
                    save_episode(dataset)
                    entry["episodes"][current]["written"] = True
                current = e
                add_frame(dataset, frame)
                written += 1
                if progress is not None and written % 30 == 0:
                    progress(30)
            save_episode(dataset)
            entry["episodes"][current]["written"] = True
            if progress is not None:
                progress(written % 30)
    except (Stopped, KeyboardInterrupt):
        entry["status"] = "stopped"
        entry["error"] = "interrupted; episodes not yet saved were discarded"
    except (BagError, ContractError) as exc:
        entry["status"] = "failed"
        entry["error"] = str(exc)
    except Exception as exc:  # unexpected: still one line, the other bags go on
        entry["status"] = "failed"
        entry["error"] = f"{job.bag}: {type(exc).__name__}: {' '.join(str(exc).split())}"
    finally:
        if dataset is not None:
            try:
                if dataset.has_pending_frames():
                    dataset.clear_episode_buffer()
                if own:
                    dataset.finalize()
            except Exception as exc:  # a part that cannot be finalized is dropped whole
                entry["status"] = "failed"
                entry["error"] = f"{job.bag}: could not finish the dataset part ({exc})"
                _written(entry, False)
    written_eps = [e for e in entry["episodes"] if e.get("written")]
    if own and written_eps and Path(job.part_root).exists():
        entry["part"] = [job.part_repo_id, job.part_root]
    elif own:
        shutil.rmtree(job.part_root, ignore_errors=True)
    entry["seconds"] = round(time.perf_counter() - started, 3)
    return entry


def _written(entry: dict, value: bool) -> None:
    for e in entry["episodes"]:
        e["written"] = value and e.get("written", False)
