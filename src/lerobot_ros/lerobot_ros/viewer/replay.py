"""Replay a recorded episode into a ViewerLog: a rosbag2 (contract topics, plus the predicted chunk and
/diagnostics when recorded) or one LeRobotDataset episode, on the live view's layout with the time panel open.

Bags are placed on their log time (one clock for every topic); datasets on their `timestamp` column (a
duration from the episode start) and `frame_index`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from lerobot_ros.bag import BagReader
from lerobot_ros.codecs import joint_trajectory_to_chunk
from lerobot_ros.contract import Contract, ContractError, parse_contract
from lerobot_ros.conventions.errors import UserError
from lerobot_ros.viewer.live import RateGate
from lerobot_ros.viewer.log import EpisodeInfo, ViewerLog
from lerobot_ros.viewer.robot import RobotGeometry

PREDICTED_CHUNK = "/policy/predicted_chunk"
DIAGNOSTICS_TOPIC = "/diagnostics"
BATCH = 2000


class ReplayError(UserError, ValueError):
    """A source that cannot be replayed (one line, says what to do)."""


@dataclass
class ReplayStats:
    messages: int = 0
    images: int = 0
    vectors: dict = field(default_factory=lambda: {"state": 0, "action": 0})
    chunks: int = 0
    diagnostics: int = 0
    frames: int = 0


def is_dataset(path) -> bool:
    return (Path(path) / "meta" / "info.json").is_file()


def bag_contract(reader: BagReader) -> Contract:
    """The contract a recorder stored in the bag's metadata (custom_data "contract")."""
    text = reader.custom_data.get("contract")
    if not text:
        raise ReplayError(
            f"{reader.path} holds no contract (not written by episode_recorder): pass --contract NAME_OR_FILE"
        )
    try:
        return parse_contract(yaml.safe_load(text))
    except (ContractError, yaml.YAMLError) as exc:
        raise ReplayError(f"the contract stored in {reader.path} is not valid ({exc}): pass --contract") from None


def state_joints(contract: Contract | None) -> list[str]:
    """ROS joint names of observation.state (what the URDF's joints are called)."""
    if contract is None or "observation.state" not in contract.features:
        return []
    f = contract.features["observation.state"]
    return list(f.joints) if f.joints else [n.removesuffix(".pos") for n in f.names]


def _level(value) -> int:
    return value[0] if isinstance(value, (bytes, bytearray)) else int(value)


class _Vectors:
    def __init__(self, log: ViewerLog, stats: ReplayStats):
        self.log, self.stats = log, stats
        self.rows: dict[str, list] = {"state": [], "action": []}

    def add(self, kind: str, t_ns: int, values, frame: int | None = None) -> None:
        self.rows[kind].append((t_ns, values, frame))
        if len(self.rows[kind]) >= BATCH:
            self.flush(kind)

    def flush(self, kind: str | None = None) -> None:
        for k in [kind] if kind else list(self.rows):
            rows, self.rows[k] = self.rows[k], []
            if rows:
                frames = [f for _, _, f in rows] if rows[0][2] is not None else None
                self.log.vectors(k, [t for t, _, _ in rows], np.stack([v for _, v, _ in rows]), frames)
                self.stats.vectors[k] += len(rows)


def replay_bag(
    path,
    log: ViewerLog,
    contract: Contract | None = None,
    robot: RobotGeometry | None = None,
    max_image_hz: float = 0.0,
    pose_hz: float = 10.0,
) -> ReplayStats:
    """Log one bag; `contract` None: the one the recorder stored in the bag."""
    stats = ReplayStats()
    with BagReader(path) as reader:
        contract = contract or bag_contract(reader)
        feature_topics = {f.topic for f in contract.features.values()}
        present = set(reader.topics)
        if not feature_topics & present:
            raise ReplayError(
                f"{path} has none of the contract's topics ({', '.join(sorted(feature_topics))}); "
                f"it has {', '.join(sorted(present)) or 'no topics'}: pass the contract it was recorded with"
            )
        task_topic = contract.task.topic
        boundary = contract.episode_boundary.topic if contract.episode_boundary else None
        wanted = feature_topics | {t for t in (task_topic, boundary, PREDICTED_CHUNK, DIAGNOSTICS_TOPIC) if t}
        if reader.custom_data.get("task"):
            log.set_task(reader.custom_data["task"], 0 if not reader.topics else _first_time(reader))
        joints = state_joints(contract)
        hold: dict[str, float] = {}
        gate, pose_gate = RateGate(max_image_hz), RateGate(pose_hz)
        vectors = _Vectors(log, stats)
        for topic, msgtype, t, raw in reader.messages(wanted & present):
            msg = reader.deserialize(raw, msgtype, topic)
            stats.messages += 1
            for feature in contract.feature_by_topic(topic):
                if feature.is_image:
                    if gate.allow(feature.name, t):
                        log.image(feature.name, feature.raw_image(msg), t)
                        stats.images += 1
                elif feature.name in ("observation.state", "action"):
                    kind = "state" if feature.name == "observation.state" else "action"
                    ros = feature.ros_values(msg)
                    vectors.add(kind, t, feature.to_lerobot(ros).astype(np.float64))
                    if kind == "state" and robot is not None:
                        hold = dict(zip(joints, ros))
                        if pose_gate.allow("pose", t):
                            log.pose(robot.pose_segments(joints, ros), t)
            if topic == task_topic and topic != boundary:
                log.set_task(str(getattr(msg, "data", getattr(msg, "task", ""))), t)
            if topic == boundary:
                log.episode_status(EpisodeInfo.from_msg(msg), t)
            if topic == PREDICTED_CHUNK and robot is not None:
                times_ns, positions = joint_trajectory_to_chunk(msg)
                g = robot.chunk(list(msg.joint_names), positions, times_ns * 1e-9, hold)
                log.chunk(g.tip, g.colors, g.ghost, t)
                stats.chunks += 1
            if topic == DIAGNOSTICS_TOPIC:
                for s in msg.status:
                    log.diagnostic(str(s.name), _level(s.level), str(s.message), t)
                    stats.diagnostics += 1
        vectors.flush()
    return stats


def _first_time(reader: BagReader) -> int:
    for _topic, _type, t, _raw in reader.messages():
        return t
    return 0


def dataset_contract(root: Path) -> Contract | None:
    """The contract `lerobot-ros convert` stored beside a converted dataset (meta/lerobot_ros_contract.yaml)."""
    path = root / "meta" / "lerobot_ros_contract.yaml"
    if not path.is_file():
        return None
    try:
        return parse_contract(yaml.safe_load(path.read_text()))
    except (ContractError, yaml.YAMLError):
        return None


def dataset_features(root) -> dict:
    return json.loads((Path(root) / "meta" / "info.json").read_text())["features"]


def _rgb(value) -> np.ndarray:
    """A dataset image (torch CHW float 0..1, or HWC uint8) -> (H, W, 3) uint8."""
    a = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
    if a.ndim == 3 and a.shape[0] in (1, 3) and a.shape[-1] not in (1, 3):
        a = np.transpose(a, (1, 2, 0))
    if a.dtype != np.uint8:
        a = np.clip(a * 255.0 + 0.5, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(a)


def replay_dataset(
    root,
    log: ViewerLog,
    episode: int = 0,
    contract: Contract | None = None,
    robot: RobotGeometry | None = None,
    max_image_hz: float = 0.0,
) -> ReplayStats:
    """Log one episode of a local LeRobotDataset (decoded by LeRobot itself: videos through its decoder)."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    root = Path(root)
    try:
        ds = LeRobotDataset(f"local/{root.name}", root=root, episodes=[episode])
    except Exception as exc:  # LeRobot raises several types for a bad folder or episode
        raise ReplayError(
            f"cannot open episode {episode} of the dataset {root}: {' '.join(str(exc).split())[:200]}"
        ) from None
    if len(ds) == 0:
        raise ReplayError(f"episode {episode} of {root} has no frames (episodes: {ds.meta.total_episodes})")
    contract = contract or dataset_contract(root)
    joints = state_joints(contract)
    to_ros = contract.features["observation.state"].to_ros if contract and joints else None
    cameras = list(log.layout.cameras)
    stats = ReplayStats()
    vectors = _Vectors(log, stats)
    gate = RateGate(max_image_hz)
    for i in range(len(ds)):
        item = ds[i]
        t_ns = int(round(float(item["timestamp"]) * 1e9))
        frame = int(item["frame_index"])
        if item.get("task"):
            log.set_task(str(item["task"]), t_ns)
        for cam in cameras:
            if cam in item and gate.allow(cam, t_ns):
                log.image(cam, _rgb(item[cam]), t_ns, frame)
                stats.images += 1
        for key, kind in (("observation.state", "state"), ("action", "action")):
            if key in item:
                values = np.asarray(item[key], dtype=np.float64).reshape(-1)
                vectors.add(kind, t_ns, values, frame)
                if kind == "state" and robot is not None and to_ros is not None:
                    log.set_time(t_ns, frame)
                    log.pose(robot.pose_segments(joints, to_ros(values)), t_ns)
        stats.frames += 1
    vectors.flush()
    return stats
