"""Join LeRobotDatasets into one with LeRobot's own aggregation (no re-encoding), e.g. the parts of a
sharded conversion (`lerobot-ros convert --num-shards K --shard-index I` run as K batch jobs).

Parts are joined in the order given; their conversion QA reports (meta/lerobot_ros_qa.json) are merged
into one with the episode numbers of the joined dataset. The output is built in a `.partial` folder and
renamed when the joined dataset has reloaded with the expected episodes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

QA = Path("meta") / "lerobot_ros_qa.json"
CONTRACT = Path("meta") / "lerobot_ros_contract.yaml"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("parts", nargs="+", help="LeRobotDataset folders to join, in this order")
    p.add_argument("--out", required=True, help="output dataset folder (must not exist)")
    p.add_argument("--repo-id", default=None, help="dataset repo id (default: local/<out folder name>)")


def _fail(msg: str, code: int = 2) -> int:
    print(f"lerobot-ros merge: {msg}", file=sys.stderr)
    return code


def _episode_lengths(root: Path) -> list[int]:
    from lerobot.datasets.lerobot_dataset import LeRobotDatasetMetadata

    meta = LeRobotDatasetMetadata(f"local/{root.name}", root=root)
    return [int(e["length"]) for e in meta.episodes] if meta.episodes is not None else []


def run(args) -> int:
    parts = [Path(p).resolve() for p in args.parts]
    out = Path(args.out).resolve()
    for part in parts:
        if not (part / "meta" / "info.json").is_file():
            return _fail(f"{part} is not a LeRobotDataset folder (no meta/info.json)")
    if len(set(parts)) != len(parts):
        return _fail("a part is given twice")
    if out.exists():
        return _fail(f"{out} exists already; choose a new --out")
    contracts = {p: (p / CONTRACT).read_text() for p in parts if (p / CONTRACT).is_file()}
    if len(set(contracts.values())) > 1:
        return _fail("the parts were converted with different contracts: " + ", ".join(str(p) for p in contracts))
    work = out.with_name(f".{out.name}.partial")
    if work.exists():
        return _fail(f"{work} exists (left by an interrupted run?); remove it first")
    repo_id = args.repo_id or f"local/{out.name}"
    from lerobot_ros.dataset.qa import format_table, merge_reports, write_report
    from lerobot_ros.dataset.writer import verify_dataset

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
            return _fail(f"cannot join the parts: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}", 1)
        if contracts:
            shutil.copyfile(next(iter(contracts)) / CONTRACT, staged / CONTRACT)
        reports = [json.loads((p / QA).read_text()) for p in parts if (p / QA).is_file()]
        report = merge_reports(reports, str(out)) if reports else None
        if report is not None:
            write_report(report, staged / QA)
        staged.rename(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if report is not None:
        print(format_table(report))
        print(f"QA report: {out / QA} ({len(reports)} of {len(parts)} parts had one)")
    print(f"dataset: {out} (repo id {repo_id}; {len(lengths)} episodes from {len(parts)} parts)")
    return 0
