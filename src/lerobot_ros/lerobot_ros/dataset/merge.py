"""Join LeRobotDatasets into one with LeRobot's own aggregation (no re-encoding), e.g. the shards of a
sharded conversion, with their QA reports merged under the joined dataset's episode numbers.

The output is built in a `.partial` folder and renamed when the joined dataset has reloaded with the
expected episodes; `MergeError` (one line) for parts that cannot be joined.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from lerobot_ros.conventions.errors import UserError
from lerobot_ros.dataset.config import MergeConfig
from lerobot_ros.dataset.conversion import CONTRACT_NAME, QA_NAME


class MergeError(UserError):
    """Parts that cannot be joined; the message says which and why."""


@dataclass
class MergeResult:
    dataset: Path
    repo_id: str
    episodes: int
    parts: int
    report: dict | None  # the merged QA report, when any part had one
    reports: int  # how many parts had one


def _episode_lengths(root: Path) -> list[int]:
    from lerobot.datasets.lerobot_dataset import LeRobotDatasetMetadata

    meta = LeRobotDatasetMetadata(f"local/{root.name}", root=root)
    return [int(e["length"]) for e in meta.episodes] if meta.episodes is not None else []


def merge(cfg: MergeConfig) -> MergeResult:
    """Join `cfg.parts` (in that order) into `cfg.root`."""
    if not cfg.parts:
        raise MergeError("no parts given; pass the LeRobotDataset folders to join")
    if not cfg.root:
        raise MergeError("no output folder given; pass --dataset.root DIR (a new folder)")
    parts = [Path(p).resolve() for p in cfg.parts]
    out = Path(cfg.root).resolve()
    for part in parts:
        if not (part / "meta" / "info.json").is_file():
            raise MergeError(f"{part} is not a LeRobotDataset folder (no meta/info.json)")
    if len(set(parts)) != len(parts):
        raise MergeError("a part is given twice")
    if out.exists():
        raise MergeError(f"{out} exists already; choose a new dataset.root")
    contracts = {p: (p / CONTRACT_NAME).read_text() for p in parts if (p / CONTRACT_NAME).is_file()}
    if len(set(contracts.values())) > 1:
        raise MergeError("the parts were converted with different contracts: " + ", ".join(str(p) for p in contracts))
    work = out.with_name(f".{out.name}.partial")
    if work.exists():
        raise MergeError(f"{work} exists (left by an interrupted run?); remove it first")
    repo_id = cfg.repo_id or f"local/{out.name}"
    from lerobot_ros.dataset.lerobot_writer import verify_dataset
    from lerobot_ros.dataset.qa import merge_reports, write_report

    work.mkdir(parents=True)
    try:
        staged = work / "dataset"
        try:
            lengths = [n for p in parts for n in _episode_lengths(p)]
            from lerobot.datasets.aggregate import aggregate_datasets

            aggregate_datasets(
                repo_ids=[f"local/{p.name}" for p in parts], roots=parts, aggr_repo_id=repo_id, aggr_root=staged
            )
            verify_dataset(staged, repo_id, lengths)
        except Exception as exc:  # LeRobot refuses parts with different features/fps/robot type
            raise MergeError(
                f"cannot join the parts: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
            ) from None
        if contracts:
            shutil.copyfile(next(iter(contracts)) / CONTRACT_NAME, staged / CONTRACT_NAME)
        reports = [json.loads((p / QA_NAME).read_text()) for p in parts if (p / QA_NAME).is_file()]
        report = merge_reports(reports, str(out)) if reports else None
        if report is not None:
            write_report(report, staged / QA_NAME)
        staged.rename(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return MergeResult(out, repo_id, len(lengths), len(parts), report, len(reports))
