"""Repair the bag of a killed recorder: lerobot_ros.bag.recover_mcap plus the episode's own custom_data.

recover_mcap copies every complete MCAP chunk into a new, readable bag. The episode's task, index,
contract and start stamp live in the provisional metadata.yaml the recorder wrote when the episode began;
they are carried into the repaired bag, with outcome "interrupted" and where it was repaired from.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import yaml

from lerobot_ros.bag import BagError, RecoveryReport, recover_mcap

from .episode_bag_writer import UNFINISHED, read_custom_data

RepairError = BagError


def repair_bag(src: str | Path, dst: str | Path) -> RecoveryReport:
    """Readable copy of bag `src` (folder or .mcap) at new folder `dst`; BagError with one line otherwise."""
    src, dst = Path(src), Path(dst)
    report = recover_mcap(src, dst)
    custom = read_custom_data(src if src.is_dir() else src.parent)
    if custom.get("outcome", UNFINISHED) == UNFINISHED:
        custom["outcome"] = "interrupted"
    custom["repaired_from"] = str(src)
    meta_path = dst / "metadata.yaml"
    doc = yaml.safe_load(meta_path.read_text())
    info = doc["rosbag2_bagfile_information"]
    info["custom_data"] = {**(info.get("custom_data") or {}), **custom}
    tmp = meta_path.with_suffix(".yaml.tmp")
    tmp.write_text(yaml.safe_dump(doc, sort_keys=False))
    tmp.replace(meta_path)
    return report


def repair(
    src: str | Path, output_dir: str | Path | None = None, in_place: bool = False
) -> tuple[Path, RecoveryReport]:
    """`lerobot-ros repair`: the repaired copy at `output_dir` (default BAG_repaired beside BAG), or with
    `in_place` BAG replaced by it (the damaged file kept as BAG.truncated once the copy is complete).
    Returns (where the repaired bag is, what was recovered); BagError (one line) otherwise."""
    src = Path(src).resolve()
    if in_place and output_dir:
        raise BagError(src, "use either output_dir or in_place, not both")
    stem = src.with_suffix("") if src.is_file() else src
    dst = Path(output_dir) if output_dir else stem.with_name(stem.name + "_repaired")
    if in_place:
        kept = stem.with_name(stem.name + ".truncated")
        if kept.exists():
            raise BagError(src, f"{kept} exists; move it away first")
        dst = stem.with_name(f".{stem.name}.repairing")
        shutil.rmtree(dst, ignore_errors=True)
    report = repair_bag(src, dst)
    if in_place:
        os.replace(src, kept)
        os.replace(dst, stem)
        dst = stem
    return dst, report
