"""LeRobotDataset writing helpers: fastest writer settings, per-bag parts, merge, reload check."""

from lerobot_ros.dataset.convert import BagJob, convert_bag
from lerobot_ros.dataset.lerobot_writer import (
    DEFAULT_VCODEC,
    create_dataset,
    merge_parts,
    vcodec_choices,
    verify_dataset,
)

__all__ = [
    "BagJob",
    "DEFAULT_VCODEC",
    "convert_bag",
    "create_dataset",
    "merge_parts",
    "vcodec_choices",
    "verify_dataset",
]
