"""`lerobot-ros export`: dataset -> rosbag2 MCAP that rosbags reads back (definitions, metadata.yaml), and the
round trip bag -> dataset -> bag -> dataset keeps every state/action value and each episode's frame count."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from lerobot_ros.bag import write_bag
from lerobot_ros.cli.main import main
from lerobot_ros.testing.bags import JOINTS, T0, so101_messages

pytestmark = pytest.mark.slow


def _contract(path: Path, boundary: bool) -> Path:
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
            },
            "observation.state": {
                "topic": "/follower/joint_states",
                "type": "sensor_msgs/msg/JointState",
                "joints": JOINTS,
                "transforms": ["rad2deg", {"linear": {"from": [-1, 1], "to": [0, 100]}, "only": ["gripper"]}],
            },
            "observation.images.front": {
                "topic": "/front/image_raw/compressed",
                "type": "sensor_msgs/msg/CompressedImage",
                "shape": [48, 64, 3],
            },
        },
    }
    if boundary:
        data["episode_boundary"] = {"topic": "/episode_status"}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _columns(root: Path):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    ds = LeRobotDataset(f"local/{root.name}", root=root)
    cols = ds.hf_dataset.with_format("numpy")
    return ds, np.stack(cols["observation.state"]), np.stack(cols["action"])


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A two-episode dataset converted from one bag with EpisodeStatus boundaries."""
    from lerobot_ros.codecs import ns_to_time
    from lerobot_ros_msgs.msg import EpisodeStatus

    tmp = tmp_path_factory.mktemp("export")
    msgs = list(so101_messages(1.2, task="pick"))
    for t, index in ((T0, 0), (T0 + 700_000_000, 1)):
        status = EpisodeStatus(episode_index=index, task="pick")
        status.header.stamp = ns_to_time(t)
        msgs.append(("/episode_status", "lerobot_ros_msgs/msg/EpisodeStatus", t, status))
    bag = write_bag(tmp / "bag", sorted(msgs, key=lambda m: m[2]))
    contract = _contract(tmp / "contract.yaml", boundary=True)
    assert (
        main(["convert", str(bag), "--contract", str(contract), "--dataset.root", str(tmp / "ds1"), "--progress=false"])
        == 0
    )
    return tmp, contract


def test_roundtrip_single_bag_with_boundaries(source):
    tmp, contract = source
    out = tmp / "exported"
    assert (
        main(["export", "--dataset.root", str(tmp / "ds1"), "--output_dir", str(out), "--progress=false"]) == 0
    )  # stored contract
    from rosbags.rosbag2 import Reader

    with Reader(out) as reader:  # plain rosbags reads it: definitions and metadata.yaml are there
        types = {c.topic: c.msgtype for c in reader.connections}
        assert types["/follower/joint_states"] == "sensor_msgs/msg/JointState"
        assert types["/episode_status"] == "lerobot_ros_msgs/msg/EpisodeStatus"
        assert all(c.msgdef.data for c in reader.connections)
    meta = yaml.safe_load((out / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["version"] == 9 and meta["storage_identifier"] == "mcap"
    assert meta["custom_data"]["task"] == "pick"
    from lerobot_ros.bag.typestore import TYPESTORE_DISTRO

    assert meta["ros_distro"] == TYPESTORE_DISTRO != "rosbags"
    from mcap.reader import make_reader

    with next(out.glob("*.mcap")).open("rb") as fh:  # rosbag2's MCAP plugin writes a RIHS01 per channel
        channels = {c.topic: c.metadata for c in make_reader(fh).get_summary().channels.values()}
    assert channels["/follower/joint_states"]["topic_type_hash"].startswith("RIHS01_")
    assert channels["/episode_status"]["topic_type_hash"].startswith("RIHS01_")
    counts = {t["topic_metadata"]["name"]: t["message_count"] for t in meta["topics_with_message_count"]}
    ds1, state1, action1 = _columns(tmp / "ds1")
    assert counts["/follower/joint_states"] == ds1.num_frames
    assert (
        main(["convert", str(out), "--contract", str(contract), "--dataset.root", str(tmp / "ds2"), "--progress=false"])
        == 0
    )
    ds2, state2, action2 = _columns(tmp / "ds2")
    assert [int(e["length"]) for e in ds2.meta.episodes] == [int(e["length"]) for e in ds1.meta.episodes]
    assert ds1.num_episodes == 2
    np.testing.assert_allclose(state2, state1, rtol=1e-6, atol=1e-5)  # float32 precision
    np.testing.assert_allclose(action2, action1, rtol=1e-6, atol=1e-5)
    assert ds2[0]["task"] == "pick"


def test_roundtrip_one_bag_per_episode_without_boundaries(source, capsys):
    tmp, _ = source
    plain = _contract(tmp / "plain.yaml", boundary=False)
    out = tmp / "per_episode"
    assert (
        main(
            [
                "export",
                "--dataset.root",
                str(tmp / "ds1"),
                "--output_dir",
                str(out),
                "--contract",
                str(plain),
                "--progress=false",
            ]
        )
        == 0
    )
    assert sorted(p.name for p in out.iterdir()) == ["episode_000000", "episode_000001"]
    assert (
        main(["convert", str(out), "--contract", str(plain), "--dataset.root", str(tmp / "ds3"), "--progress=false"])
        == 0
    )
    ds1, state1, _ = _columns(tmp / "ds1")
    ds3, state3, _ = _columns(tmp / "ds3")
    assert [int(e["length"]) for e in ds3.meta.episodes] == [int(e["length"]) for e in ds1.meta.episodes]
    np.testing.assert_allclose(state3, state1, rtol=1e-6, atol=1e-5)


def test_export_errors(source, capsys):
    tmp, _ = source
    assert (
        main(["export", "--dataset.root", str(tmp / "nothing"), "--output_dir", str(tmp / "x"), "--progress=false"])
        == 1
    )
    assert "not a LeRobotDataset folder" in capsys.readouterr().err
    assert (
        main(
            [
                "export",
                "--dataset.root",
                str(tmp / "ds1"),
                "--output_dir",
                str(tmp / "y"),
                "--contract",
                "metaworld",
                "--progress=false",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "does not match the contract" in err and "observation.image: in the contract, not in the dataset" in err
    assert (
        main(
            [
                "export",
                "--dataset.root",
                str(tmp / "ds1"),
                "--output_dir",
                str(tmp / "z"),
                "--dataset.episodes",
                "7",
                "--progress=false",
            ]
        )
        == 1
    )
    assert "no episode(s) [7]" in capsys.readouterr().err
    assert not (tmp / "y").exists() and not (tmp / "z").exists()


def test_export_to_an_unwritable_folder_is_one_line(source, capsys):
    """An output path that cannot be created (here: under a regular file, which stops root as well) is an
    OSError from the bag writer; the CLI reports it in one line and leaves nothing behind."""
    tmp, _ = source
    blocker = tmp / "a_file"
    blocker.write_text("not a folder")
    out = blocker / "bag"
    assert main(["export", "--dataset.root", str(tmp / "ds1"), "--output_dir", str(out), "--progress=false"]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lerobot-ros export: "), lines
    assert "not a directory; a part of the path is a file, not a folder" in lines[0]
    assert [p.name for p in tmp.iterdir() if p.name.startswith(".")] == []
