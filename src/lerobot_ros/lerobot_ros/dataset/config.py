"""Settings of the dataset verbs (convert, merge, export), declared once: the command-line flags and the
reference tables come from here. A dataset is named as LeRobot names it: `dataset.root` (its folder),
`dataset.repo_id`, `dataset.episodes`, `dataset.rgb_encoder.vcodec`, `dataset.push_to_hub`.
"""

from __future__ import annotations

from dataclasses import dataclass

from lerobot_ros.configs import param

DEFAULT_VCODEC = "libsvtav1"


@dataclass(frozen=True)
class ConvertConfig:
    """rosbag2 recordings -> one LeRobotDataset v3 (`lerobot-ros convert`, and the recorder's --dataset.root)."""

    bags: list[str] = param([], "bag folders, .mcap/.db3 files, or folders holding bags")
    contract: str = param("", "contract YAML path or shipped name (so101, koch, metaworld ...)")
    root: str = param("", "output dataset folder (must not exist)", name="dataset.root")
    repo_id: str | None = param(None, "dataset repo id ('' = local/<folder name>)", name="dataset.repo_id")
    task: str | None = param(None, "task string for every episode (overrides the task topic and bag metadata)")
    num_workers: int = param(
        1,
        "decode processes beside the encoder (1 = none); used only where cores are left beside the encoder. "
        "With executor ray: the number of shards (1 = the cluster's CPUs / 2)",
        min=1,
    )
    executor: str = param(
        "local", "local: this machine; ray: shards as Ray tasks, merged at the end", choices=("local", "ray")
    )
    ray_address: str | None = param(
        None,
        "with executor ray: an existing Ray cluster (e.g. ray://head:10001 or auto; default: a local one); the bags, "
        "the contract and dataset.root must then be on storage every node sees",
    )
    vcodec: str = param(DEFAULT_VCODEC, "video codec (LeRobot's choices)", name="dataset.rgb_encoder.vcodec")
    strict: bool = param(False, "treat QA warnings as failures (the episode is not written)")
    report: str | None = param(None, "QA report JSON path ('' = <dataset.root>/meta/lerobot_ros_qa.json)")
    num_shards: int = param(1, "split the bags into K shards (batch jobs); see shard_index", min=1)
    shard_index: int = param(
        0,
        "convert only shard I of num_shards (bags I, I+K, ... of the sorted list); join the parts with "
        "`lerobot-ros merge`",
        min=0,
    )
    push_to_hub: bool = param(
        False,
        "upload the finished dataset to the Hugging Face Hub as dataset.repo_id (namespace/name), with LeRobot's "
        "push_to_hub",
        name="dataset.push_to_hub",
    )
    progress: bool = param(True, "show a progress bar")

    def __post_init__(self):
        if self.shard_index >= self.num_shards:
            raise ValueError(f"shard_index must be in 0..{self.num_shards - 1} (num_shards is {self.num_shards})")


@dataclass(frozen=True)
class MergeConfig:
    """LeRobotDatasets joined into one (`lerobot-ros merge`)."""

    parts: list[str] = param([], "LeRobotDataset folders to join, in this order")
    root: str = param("", "output dataset folder (must not exist)", name="dataset.root")
    repo_id: str | None = param(None, "dataset repo id ('' = local/<folder name>)", name="dataset.repo_id")


@dataclass(frozen=True)
class ExportConfig:
    """A LeRobotDataset -> rosbag2 (MCAP) on a contract's topics (`lerobot-ros export`)."""

    root: str = param("", "the LeRobotDataset folder to export", name="dataset.root")
    repo_id: str | None = param(None, "dataset repo id ('' = local/<folder name>)", name="dataset.repo_id")
    episodes: list[int] | None = param(
        None, "episode indices, e.g. [0,3] or 0,3 (default: all)", name="dataset.episodes"
    )
    output_dir: str = param("", "output bag folder (must not exist)")
    contract: str | None = param(None, "contract YAML or shipped name (default: the dataset's stored contract)")
    progress: bool = param(True, "show a progress bar")
