"""LeRobot's DAgger `intervention` feature through ROS: a std_msgs/Bool topic (takeover_node's `intervention`) in a
contract becomes a bool (1,) dataset column per frame, held between messages, as LeRobot's rollout writes it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from lerobot_ros.contract import ContractError, load_contract

FLAG = {"topic": "/follower/intervention", "type": "std_msgs/msg/Bool"}


def _contract(tmp_path: Path, **flag) -> Path:
    from lerobot_ros.testing.bags import JOINTS

    data = {
        "robot_type": "so101_follower",
        "fps": 30,
        "features": {
            "action": {
                "topic": "/follower/commands",
                "type": "std_msgs/msg/Float64MultiArray",
                "slice": [0, 6],
                "names": [f"{j}.pos" for j in JOINTS],
                "transforms": ["rad2deg"],
                "timeline": "receive",
            },
            "observation.state": {
                "topic": "/follower/joint_states",
                "type": "sensor_msgs/msg/JointState",
                "joints": JOINTS,
            },
            "intervention": {**FLAG, **flag},
        },
    }
    path = tmp_path / "dagger.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_bool_feature_is_lerobots_intervention_column(tmp_path):
    from std_msgs.msg import Bool

    c = load_contract(str(_contract(tmp_path)))
    f = c.features["intervention"]
    assert f.is_flag and f.alignment.policy == "hold" and f.timeline == "receive"
    assert c.lerobot_features()["intervention"] == {"dtype": "bool", "shape": (1,), "names": None}
    assert f.decode(Bool(data=True)).tolist() == [1.0] and f.decode(Bool(data=False)).tolist() == [0.0]
    assert f.frame_value(np.float32([1.0])).dtype == bool and f.frame_value(np.float32([0.0])).tolist() == [False]
    assert f.encode([1.0]).data is True


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"names": ["x"]}, "'names' does not apply to a std_msgs/Bool feature"),
        ({"transforms": ["rad2deg"]}, "'transforms' does not apply to a std_msgs/Bool feature"),
        ({"alignment": {"policy": "interpolate"}}, "a bool cannot be interpolated; use hold, asof or nearest"),
    ],
)
def test_bool_feature_refuses_what_makes_no_sense(tmp_path, extra, message):
    with pytest.raises(ContractError, match=message):
        load_contract(str(_contract(tmp_path, **extra)))


@pytest.mark.slow
def test_recorded_intervention_converts_to_a_bool_column_frame_by_frame(tmp_path):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    from std_msgs.msg import Bool

    from lerobot_ros.bag import BagWriter
    from lerobot_ros.cli.main import main
    from lerobot_ros.testing.bags import T0, so101_messages

    bag = tmp_path / "bags" / "ep"
    # a person takes over from 0.5 s to 1.2 s of a 2 s episode (takeover_node publishes at 30 Hz; here at changes only)
    flags = [(T0, False), (T0 + 500_000_000, True), (T0 + 1_200_000_000, False)]
    with BagWriter(bag, "mcap", 9, None, None) as writer:
        events = [(t, topic, typ, msg) for topic, typ, t, msg in so101_messages(2.0, cameras={})]
        events += [(t, "/follower/intervention", "std_msgs/msg/Bool", Bool(data=v)) for t, v in flags]
        for t, topic, typ, msg in sorted(events, key=lambda e: e[0]):
            writer.add_topic(topic, typ, "reliable" if topic != "/follower/joint_states" else "sensor")
            writer.write(topic, t, msg)
    out = tmp_path / "ds"
    assert (
        main(
            [
                "convert",
                str(bag),
                "--contract",
                str(_contract(tmp_path)),
                "--dataset.root",
                str(out),
                "--progress=false",
                "--dataset.repo_id",
                "local/dagger",
                "--task",
                "pick the cube",
            ]
        )
        == 0
    )
    ds = LeRobotDataset("local/dagger", root=out)
    assert ds.meta.features["intervention"]["dtype"] == "bool"
    column = np.stack(ds.hf_dataset.with_format("numpy")["intervention"]).reshape(-1)
    t = np.arange(len(column)) / 30
    expected = (t >= 0.5) & (t < 1.2)
    assert column.dtype == bool and np.array_equal(column, expected)
