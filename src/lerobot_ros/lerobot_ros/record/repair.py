"""Repair the bag of a killed recorder: lerobot_ros.bag.recover_mcap plus the episode's own custom_data.

recover_mcap copies every complete MCAP chunk into a new, readable bag. The episode's task, index,
contract and start stamp live in the provisional metadata.yaml the recorder wrote when the episode began;
they are carried into the repaired bag, with outcome "interrupted" and where it was repaired from.
"""

from __future__ import annotations

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
