"""One replay as a library call: a bag or a LeRobotDataset episode into a served (or saved) rerun viewer.

`replay_source(source, cfg, episode_index)` finds the contract (given, stored in the bag, or stored with the
dataset), lays out the viewer from the features, opens it as `cfg.viewer` asks and logs the episode; a source
that cannot be replayed raises `ReplayError` (one line). `lerobot-ros view SOURCE` prints what came of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lerobot_ros.viewer.config import ViewerConfig
from lerobot_ros.viewer.replay import ReplayError, ReplayStats

if TYPE_CHECKING:
    from lerobot_ros.viewer.serve import Endpoint


@dataclass
class Replayed:
    stats: ReplayStats
    endpoint: Endpoint
    seconds: float
    # the rerun.RecordingStream: its gRPC server (what the web viewer reads) lives as long as it does, so the
    # caller holds it while the viewer is served
    recording: object = None


def replay_source(
    source: str | Path, cfg: ViewerConfig, episode_index: int = 0, contract_given: bool = True
) -> Replayed:
    """Replay `source`; `contract_given`: use `cfg.contract`, else the one the bag / dataset stored."""
    import rerun as rr

    from lerobot_ros.bag import BagReader
    from lerobot_ros.contract import load_contract
    from lerobot_ros.viewer.layout import ViewerLayout
    from lerobot_ros.viewer.log import ViewerLog
    from lerobot_ros.viewer.replay import (
        bag_contract,
        dataset_contract,
        dataset_features,
        is_dataset,
        replay_bag,
        replay_dataset,
    )
    from lerobot_ros.viewer.robot import load_robot
    from lerobot_ros.viewer.serve import open_viewer

    source = Path(source)
    if not source.exists():
        raise ReplayError(f"{source} does not exist (a bag folder or file, or a LeRobotDataset folder)")
    contract = load_contract(cfg.contract) if contract_given else None
    dataset = is_dataset(source)
    if dataset:
        contract = contract or dataset_contract(source)
        features = dataset_features(source)
        robot_type = contract.robot_type if contract else ""
    else:
        if contract is None:
            with BagReader(source) as reader:
                contract = bag_contract(reader)
        features, robot_type = contract.lerobot_features(), contract.robot_type
    robot = load_robot(cfg.urdf, robot_type)
    layout = ViewerLayout.from_features(features, robot_3d=robot is not None)
    recording = rr.RecordingStream("lerobot_ros", recording_id=f"replay-{source.name}")
    endpoint = open_viewer(
        recording,
        layout.blueprint(live=False),
        cfg.viewer,
        cfg.web_port,
        cfg.grpc_port,
        cfg.memory_limit,
        cfg.save or None,
    )
    log = ViewerLog(recording, layout)
    started = time.monotonic()
    if dataset:
        stats = replay_dataset(source, log, episode_index, contract, robot, cfg.max_image_hz)
    else:
        stats = replay_bag(source, log, contract, robot, cfg.max_image_hz)
    recording.flush()
    if endpoint.mode == "file":
        recording.disconnect()
    return Replayed(stats, endpoint, time.monotonic() - started, recording)
