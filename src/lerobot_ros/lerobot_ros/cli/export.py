"""Export a LeRobotDataset to rosbag2 (MCAP) on a contract's topics, with message definitions and
metadata.yaml, for `ros2 bag play`, Foxglove or rviz, and for reading back with `rosbags`.

Without --contract the contract stored by `lerobot-ros convert` (meta/lerobot_ros_contract.yaml) is used.
Episodes go into one bag when the contract has an episode_boundary topic, else one bag per episode in OUT.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dataset", help="LeRobotDataset folder (root)")
    p.add_argument("--out", required=True, help="output bag folder (must not exist)")
    p.add_argument(
        "--contract", default=None, help="contract YAML or shipped name (default: the dataset's stored contract)"
    )
    p.add_argument("--repo-id", default=None, help="dataset repo id (default: local/<folder name>)")
    p.add_argument("--episodes", default=None, help="comma-separated episode indices (default: all)")
    p.add_argument("--no-progress", action="store_true")


def _fail(msg: str, code: int = 2) -> int:
    print(f"lerobot-ros export: {msg}", file=sys.stderr)
    return code


def run(args) -> int:
    from lerobot_ros.contract import ContractError, load_contract

    root = Path(args.dataset).resolve()
    if not (root / "meta" / "info.json").is_file():
        return _fail(f"{root} is not a LeRobotDataset folder (no meta/info.json)")
    contract_arg = args.contract or root / "meta" / "lerobot_ros_contract.yaml"
    if args.contract is None and not Path(contract_arg).is_file():
        return _fail(f"{root} has no stored contract; pass --contract")
    try:
        contract = load_contract(contract_arg)
        episodes = None if args.episodes is None else [int(x) for x in args.episodes.split(",") if x.strip()]
    except ContractError as exc:
        return _fail(str(exc))
    except ValueError:
        return _fail(f"--episodes takes comma-separated integers, got {args.episodes!r}")
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    from tqdm import tqdm

    from lerobot_ros.dataset.export import export_dataset

    try:
        dataset = LeRobotDataset(args.repo_id or f"local/{root.name}", root=root)
    except Exception as exc:
        return _fail(f"cannot load {root}: {' '.join(str(exc).split())}")
    total = (
        dataset.meta.total_frames
        if episodes is None
        else sum(int(dataset.meta.episodes[e]["length"]) for e in episodes if 0 <= e < dataset.meta.total_episodes)
    )
    bar = tqdm(total=total, unit="frame", desc="export", disable=args.no_progress, file=sys.stderr)
    try:
        written = export_dataset(dataset, contract, Path(args.out).resolve(), episodes, progress=bar.update)
    except ContractError as exc:
        return _fail(str(exc))
    finally:
        bar.close()
    for path, frames in written.items():
        print(f"{path}: {len(frames)} episode(s), {sum(frames)} frame(s)")
    return 0
