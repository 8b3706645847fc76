"""Bag reading/writing with rosbags: both storages, versions 8/9, zstd; truncated MCAP read and recovery."""

from __future__ import annotations

import numpy as np
import pytest

from lerobot_ros.bag import BagError, BagWriter, header_stamp_ns, open_bag, recover_mcap, write_bag
from lerobot_ros.codecs import numpy_to_compressed, numpy_to_image, numpy_to_joint_state

MS = 1_000_000


def _messages(n=300):
    rng = np.random.default_rng(0)
    for i in range(n):
        t = 1_000_000_000 + i * 10 * MS
        yield "/js", "sensor_msgs/msg/JointState", t, numpy_to_joint_state(["a", "b"], position=[i, -i], stamp_ns=t + 7)
        if i % 3 == 0:
            pixels = rng.integers(0, 255, (24, 32, 3), dtype=np.uint8)
            yield "/cam/image_raw", "sensor_msgs/msg/Image", t + 1, numpy_to_image(pixels, "bgr8", stamp_ns=t)
            yield (
                "/cam/image_raw/compressed",
                "sensor_msgs/msg/CompressedImage",
                t + 2,
                numpy_to_compressed(pixels, stamp_ns=t),
            )


@pytest.mark.parametrize(
    "storage,version,compression",
    [
        ("mcap", 9, None),
        ("mcap", 8, "zstd"),
        ("sqlite3", 9, None),
        ("sqlite3", 8, "zstd"),
    ],
)
def test_formats_roundtrip(tmp_path, storage, version, compression):
    path = write_bag(
        tmp_path / "bag",
        _messages(),
        storage=storage,
        version=version,
        compression=compression,
        custom_data={"task": "pick the cube"},
    )
    suffix = ".mcap" if storage == "mcap" else ".db3"
    stored = sorted(p.name for p in path.iterdir())
    assert stored == ["bag" + suffix, "metadata.yaml"]
    assert not list(tmp_path.glob(".*partial*"))
    for target in (path, path / ("bag" + suffix)):  # folder and bare storage file
        with open_bag(target) as bag:
            assert bag.topics["/js"].count == 300 and bag.topics["/cam/image_raw"].count == 100
            assert bag.topics["/cam/image_raw/compressed"].msgtype == "sensor_msgs/msg/CompressedImage"
            if target == path:
                assert bag.custom_data == {"task": "pick the cube"}
            seen = []
            for topic, msgtype, t, raw in bag.messages(["/js"]):
                msg = bag.deserialize(raw, msgtype, topic)
                seen.append((t, header_stamp_ns(raw), float(msg.position[0])))
            assert len(seen) == 300
            assert seen[5] == (1_000_000_000 + 50 * MS, 1_000_000_000 + 50 * MS + 7, 5.0)


def test_truncated_mcap_is_read_front_to_back_and_recovered(tmp_path):
    path = write_bag(tmp_path / "bag", _messages(3000), storage="mcap")
    data = (path / "bag.mcap").read_bytes()
    cut = tmp_path / "killed.mcap"
    cut.write_bytes(data[: len(data) * 2 // 3])  # writer killed mid-file: no summary, no footer
    from rosbags.rosbag2 import Reader, ReaderError

    with pytest.raises(ReaderError, match="File end magic is invalid"):  # rosbags alone: no footer, no read
        Reader(cut).open()
    with open_bag(cut) as bag:
        assert bag.truncated
        count = bag.topics["/js"].count
        assert 0 < count < 3000
        stamps = [header_stamp_ns(raw) for _t, _ty, _l, raw in bag.messages(["/js"])]
        assert stamps == sorted(stamps) and len(stamps) == count
        assert stamps[0] == 1_000_000_000 + 7  # read from the front: nothing lost before the cut
    report = recover_mcap(cut, tmp_path / "recovered")
    assert not report.complete and report.topics["/js"] == count and report.stop_reason
    with open_bag(tmp_path / "recovered") as bag:  # rosbags reads the copy directly
        assert not bag.truncated
        assert bag.topics["/js"].count == count
        raw = next(bag.messages(["/cam/image_raw"]))[3]
        assert bag.deserialize(raw, "sensor_msgs/msg/Image").encoding == "bgr8"
    with pytest.raises(BagError, match="exists already"):
        recover_mcap(cut, tmp_path / "recovered")


def test_a_killed_bag_with_service_events_is_recovered_whole(tmp_path):
    """`ros2 bag record --all-services` stores each service's .srv text as its event topics' schema; recovery
    parsed schemas its own way and failed on those (the whole bag lost), where the reader reads them."""
    from pathlib import Path

    source = next(
        (Path(__file__).parents[1] / "data" / "rosbag2" / "mcap" / "bag_with_topics_and_service_events").glob("*.mcap")
    )
    data = source.read_bytes()
    cut = tmp_path / "killed.mcap"
    cut.write_bytes(data[: len(data) - 200])  # the summary and footer gone
    report = recover_mcap(cut, tmp_path / "recovered")
    assert (
        report.topics
        == {
            "/test_service1/_service_event": 4,
            "/test_service2/_service_event": 4,
            "/test_topic1": 1,
            "/test_topic2": 1,
        }
        and report.skipped == {}
    )
    with open_bag(tmp_path / "recovered") as bag:
        events = [
            bag.deserialize(m.data, m.msgtype, m.topic) for m in bag.messages() if m.topic.endswith("/_service_event")
        ]
    assert sorted((len(e.request), len(e.response)) for e in events) == [(0, 1)] * 4 + [(1, 0)] * 4


def test_a_topic_whose_definition_cannot_be_parsed_is_left_out_of_the_recovery(tmp_path, capsys):
    """One topic's schema is not a message definition: the others are recovered, the report names it and why."""
    from mcap.writer import Writer
    from rclpy.serialization import serialize_message

    from lerobot_ros.bag import make_typestore

    store = make_typestore()
    js_type = "sensor_msgs/msg/JointState"
    killed = tmp_path / "killed.mcap"
    with killed.open("wb") as fh:
        writer = Writer(fh, use_chunking=False)
        writer.start("ros2", "test")
        good = writer.register_schema(js_type, "ros2msg", store.generate_msgdef(js_type, ros_version=2)[0].encode())
        bad = writer.register_schema("bad_pkg/msg/Broken", "ros2msg", b"this ] is [ not a definition")
        js = writer.register_channel("/js", "cdr", good, {})
        broken = writer.register_channel("/broken", "cdr", bad, {})
        for i in range(5):
            t = 1_000_000_000 + i * 10 * MS
            raw = serialize_message(numpy_to_joint_state(["a"], position=[float(i)], stamp_ns=t))
            writer.add_message(js, log_time=t, data=raw, publish_time=t)
            writer.add_message(broken, log_time=t, data=b"\x00\x01\x00\x00", publish_time=t)
        # killed: no finish(), so no summary and no footer
    report = recover_mcap(killed, tmp_path / "recovered")
    assert report.topics == {"/js": 5} and not report.complete
    assert report.skipped == {"/broken": "its bad_pkg/msg/Broken definition cannot be parsed (TypesysError)"}
    with open_bag(tmp_path / "recovered") as bag:
        positions = [bag.deserialize(m.data, m.msgtype, m.topic).position[0] for m in bag.messages()]
    assert positions == [0.0, 1.0, 2.0, 3.0, 4.0]
    from lerobot_ros.cli.main import main

    assert main(["repair", str(killed), "--output_dir", str(tmp_path / "by_cli")]) == 0
    assert (
        capsys.readouterr()
        .out.strip()
        .endswith("; left out /broken: its bad_pkg/msg/Broken definition cannot be parsed (TypesysError)")
    )


def test_bag_folder_without_metadata_yaml_is_read(tmp_path):
    path = write_bag(tmp_path / "bag", _messages(50), storage="mcap", custom_data={"task": "t"})
    (path / "metadata.yaml").unlink()  # writer killed before it wrote metadata.yaml
    with open_bag(path) as bag:  # its storage file is complete: read whole, nothing to call truncated
        assert not bag.truncated and bag.topics["/js"].count == 50
        assert bag.topics["/js"].metadata_count is None and bag.custom_data == {}


def test_bad_inputs_name_the_bag(tmp_path):
    with pytest.raises(BagError, match="does not exist"):
        open_bag(tmp_path / "missing")
    junk = tmp_path / "junk.mcap"
    junk.write_bytes(b"not an mcap file at all")
    with pytest.raises(BagError, match=r"junk.mcap: not an MCAP file"):
        open_bag(junk)
    db = tmp_path / "junk.db3"
    db.write_bytes(b"garbage" * 100)
    with pytest.raises(BagError, match="junk.db3: cannot be read"):
        open_bag(db)


def test_unknown_type_is_named(tmp_path):
    path = write_bag(tmp_path / "bag", list(_messages(3)))
    with open_bag(path) as bag:
        raw = next(bag.messages(["/js"]))[3]
        with pytest.raises(BagError, match="unknown message type 'foo_msgs/msg/Bar' on /js"):
            bag.deserialize(raw, "foo_msgs/msg/Bar", "/js")


def test_writer_leaves_nothing_on_error(tmp_path):
    with pytest.raises(RuntimeError), BagWriter(tmp_path / "out") as writer:
        writer.add_topic("/js", "sensor_msgs/msg/JointState")
        writer.write("/js", 1, numpy_to_joint_state(["a"], position=[1.0]))
        raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []


def test_custom_interface_types_roundtrip(tmp_path):
    from lerobot_ros_msgs.msg import EpisodeStatus

    msg = EpisodeStatus(episode_index=3, task="stack", done=True)
    path = write_bag(tmp_path / "bag", [("/status", "lerobot_ros_msgs/msg/EpisodeStatus", 5, msg)])
    with open_bag(path) as bag:
        _t, msgtype, _l, raw = next(bag.messages())
        out = bag.deserialize(raw, msgtype)
        assert (out.episode_index, out.task, out.done) == (3, "stack", True)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_written_bags_carry_type_hashes_and_a_distro_name(tmp_path, storage):
    """What rosbag2's storage plugins write: RIHS01 per MCAP channel (topic_type_hash) matching the hash
    rosidl generated for the installed message package, and ros_distro a distro name, not 'rosbags'."""
    import json
    import sqlite3
    import sys
    from pathlib import Path

    import yaml

    from lerobot_ros.bag.typestore import TYPESTORE_DISTRO

    path = write_bag(tmp_path / "bag", _messages(3), storage=storage)
    rosidl = {}
    for msgtype in ("sensor_msgs/msg/JointState", "sensor_msgs/msg/Image"):
        desc = json.loads((Path(sys.prefix) / "share" / f"{msgtype}.json").read_text())
        rosidl[msgtype] = next(h["hash_string"] for h in desc["type_hashes"] if h["type_name"] == msgtype)
    assert TYPESTORE_DISTRO in ("jazzy", "kilted", "lyrical")
    meta = yaml.safe_load((path / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["ros_distro"] == TYPESTORE_DISTRO
    hashes = {
        t["topic_metadata"]["type"]: t["topic_metadata"]["type_description_hash"]
        for t in meta["topics_with_message_count"]
    }
    assert {k: hashes[k] for k in rosidl} == rosidl
    if storage == "mcap":
        from mcap.reader import make_reader

        with (path / "bag.mcap").open("rb") as fh:
            reader = make_reader(fh)
            summary = reader.get_summary()
            channels = {c.topic: c for c in summary.channels.values()}
            assert channels["/js"].metadata["topic_type_hash"] == rosidl["sensor_msgs/msg/JointState"]
            assert channels["/cam/image_raw"].metadata["topic_type_hash"] == rosidl["sensor_msgs/msg/Image"]
            assert "offered_qos_profiles" in channels["/js"].metadata
            record = next(m for m in reader.iter_metadata() if m.name == "rosbag2")
            assert f"ros_distro: {TYPESTORE_DISTRO}" in record.metadata["serialized_metadata"]
    else:
        with sqlite3.connect(path / "bag.db3") as db:
            assert db.execute("SELECT ros_distro FROM schema").fetchall() == [(TYPESTORE_DISTRO,)]
    with open_bag(path) as bag:
        assert bag.ros_distro == TYPESTORE_DISTRO and bag.topics["/js"].count == 3
