"""Contracts for the synthetic SO-101 bags of lerobot_ros.testing.bags (and shipped ones trimmed for a test),
loading the LeRobotDatasets converted from them, and the recorder's live counts."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from lerobot_ros.testing.bags import JOINTS

#: the camera frame size the contracts below declare
H, W = 48, 64


def contract_file(
    tmp_path: Path, camera_type="sensor_msgs/msg/CompressedImage", camera_topic="/front/image_raw/compressed", **extra
) -> Path:
    data = {
        "robot_type": "so101_follower",
        "fps": 30,
        "task": {"topic": "/task"},
        "features": {
            "action": {
                "topic": "/follower/commands",
                "type": "std_msgs/msg/Float64MultiArray",
                "slice": [0, 6],
                "names": [f"{j}.pos" for j in JOINTS],
                "transforms": ["rad2deg"],
                "timeline": "receive",
                "alignment": {"policy": "hold", "tolerance_ms": 100},
            },
            "observation.state": {
                "topic": "/follower/joint_states",
                "type": "sensor_msgs/msg/JointState",
                "joints": JOINTS,
                "transforms": ["rad2deg"],
                "alignment": {"policy": "interpolate", "tolerance_ms": 100},
            },
            "observation.images.front": {
                "topic": camera_topic,
                "type": camera_type,
                "shape": [H, W, 3],
                "alignment": {"policy": "nearest", "tolerance_ms": 50},
            },
        },
    }
    data.update(extra)
    path = tmp_path / f"contract_{camera_type.split('/')[-1]}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def contract_without_cameras(name: str, path: Path) -> Path:
    """A shipped contract with its camera features dropped (a test without camera nodes), written to `path`."""
    from lerobot_ros.contract import load_contract

    data = json.loads(json.dumps(load_contract(name).raw))
    data["features"] = {k: v for k, v in data["features"].items() if not k.startswith("observation.images.")}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def recorder_count(diagnostics, topic: str) -> int | None:
    """The episode recorder's live count of `topic` in the episode, from its newest report among the collected
    /diagnostics arrays (None: no report on that topic yet)."""
    for array in reversed(diagnostics.messages):
        for status in array.status:
            if status.name == f"episode_recorder: {topic}":
                count = next((kv.value for kv in status.values if kv.key == "count"), None)
                return None if count is None else int(count)
    return None


def load(root: Path):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    return LeRobotDataset(f"local/{root.name}", root=root)


def contract_with_image_shapes(name: str, path: Path, shapes: dict[str, tuple[int, int]]) -> Path:
    """A shipped contract whose camera features declare other image sizes (a twin rendering small images in a test):
    `shapes` maps a camera (`front`) to (height, width); cameras not named are dropped."""
    from lerobot_ros.contract import load_contract

    data = json.loads(json.dumps(load_contract(name).raw))
    features = {}
    for key, spec in data["features"].items():
        camera = key.removeprefix("observation.images.")
        if camera != key:
            if camera not in shapes:
                continue
            spec["shape"] = [*shapes[camera], 3]
        features[key] = spec
    data["features"] = features
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def convert_recordings(recordings: Path, contract: Path, root: Path, env: dict, repo_id: str = "local/dataset"):
    """`lerobot-ros convert` of a recorder's bags into `root` as a user runs it (a child process); asserts it
    succeeded (stderr's tail in the message) and returns the loaded LeRobotDataset."""
    import subprocess
    import sys

    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "lerobot-ros"),
            "convert",
            str(recordings),
            f"--contract={contract}",
            f"--dataset.repo_id={repo_id}",
            f"--dataset.root={root}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return load(root)
