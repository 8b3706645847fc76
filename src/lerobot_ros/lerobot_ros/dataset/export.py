"""LeRobotDataset -> rosbag2 (MCAP) on a contract's topics, replayable with `ros2 bag play` / Foxglove.

Frame k of an episode is stamped start + k/fps (integer ns, the resampler's grid), so converting the
bag back gives the same frames. Episodes are split by EpisodeStatus messages on the contract's
episode_boundary topic; without one, each episode gets its own bag folder (OUT/episode_000000 ...).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import cast

import numpy as np

from lerobot_ros.bag.writer import BagWriter
from lerobot_ros.contract import Contract, ContractError
from lerobot_ros.contract import messages as M
from lerobot_ros.conventions.errors import UserError
from lerobot_ros.dataset.config import ExportConfig

EXPORT_T0 = 1_700_000_000_000_000_000  # 2023-11-14: any fixed, positive epoch time works for replay
EPISODE_GAP_NS = 1_000_000_000


def check_features(contract: Contract, features: dict) -> list[str]:
    """Mismatches between a contract and a dataset's features (name, dtype kind, shape)."""
    problems = []
    for name, feature in contract.features.items():
        info = features.get(name)
        if info is None:
            problems.append(f"{name}: in the contract, not in the dataset")
            continue
        want = feature.lerobot_feature()
        is_visual = info["dtype"] in ("video", "image")
        if is_visual != feature.is_image:
            problems.append(f"{name}: dataset dtype {info['dtype']}, contract type {feature.msg_type}")
        elif tuple(info["shape"]) != tuple(want["shape"]):
            problems.append(f"{name}: dataset shape {tuple(info['shape'])}, contract shape {tuple(want['shape'])}")
    return problems


def _to_hwc_uint8(value) -> np.ndarray:
    arr = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
    if arr.dtype != np.uint8:
        arr = np.clip(np.round(arr.astype(np.float32) * 255.0), 0, 255).astype(np.uint8)
    if arr.ndim == 3 and arr.shape[0] in (1, 3) and arr.shape[-1] not in (1, 3):
        arr = np.transpose(arr, (1, 2, 0))
    return np.ascontiguousarray(arr)


def export_dataset(dataset, contract: Contract, out: Path, episodes: list[int] | None = None, progress=None) -> dict:
    """Write the episodes of a loaded LeRobotDataset as rosbag2 MCAP; returns {bag path: frames per episode}."""
    problems = check_features(contract, dataset.meta.features)
    if problems:
        raise ContractError("the dataset does not match the contract: " + "; ".join(problems))
    out = Path(out)
    if out.exists():
        raise ContractError(f"{out} exists already; choose a new output_dir")
    all_eps = list(range(dataset.meta.total_episodes))
    episodes = all_eps if episodes is None else episodes
    bad = [e for e in episodes if e not in all_eps]
    if bad:
        raise ContractError(f"no episode(s) {bad} in the dataset (it has {len(all_eps)})")
    boundary = contract.episode_boundary.topic if contract.episode_boundary else None
    split = boundary is None and len(episodes) > 1
    staging = out.with_name(f".{out.name}.export") if split else None
    if staging is not None:
        if staging.exists():
            raise ContractError(f"{staging} exists (left by an earlier run?); remove it first")
        staging.mkdir()
    written: dict[str, list[int]] = {}
    writer = None
    try:
        t = EXPORT_T0
        for n, ep in enumerate(episodes):
            if writer is None:
                path = (cast(Path, staging) / f"episode_{ep:06d}") if split else out  # staging is set when split
                writer = _open_writer(path, contract, dataset, ep)
                written[str(out / path.name) if split else str(out)] = []
            frames = _write_episode(writer, dataset, contract, ep, n, t, boundary, progress)
            written[list(written)[-1]].append(frames)
            t += (frames * 1_000_000_000) // contract.fps + EPISODE_GAP_NS
            if split:
                writer.close()
                writer = None
        if writer is not None:
            writer.close()
            writer = None
        if staging is not None:
            staging.rename(out)
    except BaseException:
        if writer is not None:
            writer.abort()
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        raise
    return written


def _episode_task(dataset, ep: int) -> str:
    row = dataset.meta.episodes[ep]
    tasks = row.get("tasks", [])
    return str(tasks[0]) if len(tasks) else ""


def _open_writer(path: Path, contract: Contract, dataset, ep: int) -> BagWriter:
    task = _episode_task(dataset, ep)
    writer = BagWriter(path, "mcap", 9, custom_data={contract.task.metadata_key: task} if task else None)
    for f in contract.features.values():
        writer.add_topic(f.topic, f.msg_type, f.qos)
    if contract.task.topic:
        writer.add_topic(contract.task.topic, M.STRING, "latched")
    if contract.episode_boundary:
        writer.add_topic(contract.episode_boundary.topic, M.EPISODE_STATUS, "reliable")
    return writer


def _write_episode(
    writer: BagWriter, dataset, contract: Contract, ep: int, n: int, start: int, boundary, progress
) -> int:
    from std_msgs.msg import String

    row = dataset.meta.episodes[ep]
    first, last = int(row["dataset_from_index"]), int(row["dataset_to_index"])
    task = _episode_task(dataset, ep)
    if contract.task.topic:
        writer.write(contract.task.topic, start, String(data=task))
    status = None
    if boundary:
        from lerobot_ros_msgs.msg import EpisodeStatus

        status = EpisodeStatus(episode_index=n, task=task)
        writer.write(boundary, start, _stamped(status, start))
    for k, index in enumerate(range(first, last)):
        item = dataset[index]
        t = start + (k * 1_000_000_000) // contract.fps
        for name, feature in contract.features.items():
            if feature.is_image:
                value = _to_hwc_uint8(item[name])
            else:
                value = item[name].numpy() if hasattr(item[name], "numpy") else np.asarray(item[name])
            writer.write(feature.topic, t, feature.encode(value, stamp_ns=t))
        if progress is not None:
            progress(1)
    if status is not None:
        status.step, status.done = last - first, True
        writer.write(boundary, start + ((last - first - 1) * 1_000_000_000) // contract.fps, _stamped(status, start))
    return last - first


def _stamped(msg, t: int):
    from lerobot_ros.codecs import ns_to_time

    msg.header.stamp = ns_to_time(t)
    return msg


class ExportError(UserError):
    """A dataset or contract that cannot be exported; the message says what to do."""


def export(cfg: ExportConfig) -> dict:
    """`lerobot-ros export`: load the dataset at `cfg.root` and write its episodes as rosbag2 into
    `cfg.output_dir` with `cfg.contract` (default: the contract the converter stored with the dataset);
    returns {bag path: frames per episode}."""
    import sys

    from tqdm import tqdm

    from lerobot_ros.contract import load_contract

    if not cfg.root:
        raise ExportError("no dataset given; pass --dataset.root DIR")
    if not cfg.output_dir:
        raise ExportError("no output folder given; pass --output_dir DIR (a new folder)")
    root = Path(cfg.root).resolve()
    if not (root / "meta" / "info.json").is_file():
        raise ExportError(f"{root} is not a LeRobotDataset folder (no meta/info.json)")
    contract_arg = cfg.contract or root / "meta" / "lerobot_ros_contract.yaml"
    if cfg.contract is None and not Path(contract_arg).is_file():
        raise ExportError(f"{root} has no stored contract; pass --contract")
    contract = load_contract(contract_arg)
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    try:
        dataset = LeRobotDataset(cfg.repo_id or f"local/{root.name}", root=root)
    except Exception as exc:
        raise ExportError(f"cannot load {root}: {' '.join(str(exc).split())}") from None
    episodes = cfg.episodes
    total = (
        dataset.meta.total_frames
        if episodes is None
        else sum(int(dataset.meta.episodes[e]["length"]) for e in episodes if 0 <= e < dataset.meta.total_episodes)
    )
    bar = tqdm(total=total, unit="frame", desc="export", disable=not cfg.progress, file=sys.stderr)
    try:
        return export_dataset(dataset, contract, Path(cfg.output_dir).resolve(), episodes, progress=bar.update)
    finally:
        bar.close()
