"""Every message a bag's storage holds is read, whatever wrote the bag: rosbag2's own test bags (v4, v5,
v8 with service events), metadata.yaml with other QoS text / counts / versions / no metadata.yaml at all,
split files in numeric order, nested folders of bags."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from lerobot_ros.bag import BagError, BagMessage, find_bags, open_bag, write_bag
from lerobot_ros.codecs import numpy_to_joint_state

DATA = Path(__file__).parents[1] / "data" / "rosbag2"
MS = 1_000_000


def _js(n, t0=1_000_000_000, start=0):
    for i in range(start, start + n):
        t = t0 + i * 10 * MS
        yield "/js", "sensor_msgs/msg/JointState", t, numpy_to_joint_state(["a"], position=[float(i)], stamp_ns=t)


def _edit_metadata(bag: Path, edit) -> None:
    meta = bag / "metadata.yaml"
    doc = yaml.safe_load(meta.read_text())
    edit(doc["rosbag2_bagfile_information"])
    meta.write_text(yaml.safe_dump(doc))


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_rosbag2_own_bags_read_whole(storage):
    """rosbag2's talker (format v4) and convert_a (v5) bags: their metadata.yaml QoS text differs from the
    storage's, which made rosbags' directory reader yield nothing."""
    with open_bag(DATA / storage / "talker") as bag:
        assert bag.layout.version == 4
        assert {t: i.count for t, i in bag.topics.items() if i.count} == {"/topic": 10, "/rosout": 10}
        assert "reliability: 1" in bag.topics["/topic"].qos_text  # reported, not used to match
        msgs = list(bag.messages(["/topic"]))
        assert all(isinstance(m, BagMessage) for m in msgs)
        assert [bag.deserialize(m.data, m.msgtype).data for m in msgs] == [f"Hello, world! {i}" for i in range(10)]
        assert len(list(bag.messages())) == 20 and bag.notes == []
    with open_bag(DATA / storage / "convert_a") as bag:
        assert bag.layout.version == 5
        counts = {}
        for m in bag.messages():
            counts[m.topic] = counts.get(m.topic, 0) + 1
        assert counts == {"a_empty": 100, "b_basictypes": 50}


def test_service_event_types_are_parsed_from_the_srv_text():
    with open_bag(DATA / "mcap" / "bag_with_topics_and_service_events") as bag:
        events = [
            (m.topic, bag.deserialize(m.data, m.msgtype, m.topic))
            for m in bag.messages()
            if m.topic.endswith("/_service_event")
        ]
    assert len(events) == 8
    kinds = sorted((len(e.request), len(e.response), int(e.info.event_type)) for _t, e in events)
    assert kinds == [(0, 1, 3)] * 4 + [(1, 0, 0)] * 4  # 4 requests sent, 4 responses received
    assert all(hasattr(e.request[0] if e.request else e.response[0], "int64_value") for _t, e in events)


def test_edited_qos_text_in_metadata_drops_nothing(tmp_path):
    bag = write_bag(tmp_path / "bag", _js(100), storage="mcap")

    def edit(info):
        info["topics_with_message_count"][0]["topic_metadata"]["offered_qos_profiles"] = (
            "- history: keep_last\n  depth: 7\n  reliability: best_effort\n  durability: volatile\n"
        )

    _edit_metadata(bag, edit)
    with open_bag(bag) as reader:
        assert "depth: 7" in reader.topics["/js"].qos_text
        assert len(list(reader.messages(["/js"]))) == 100 and reader.notes == []


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
@pytest.mark.parametrize("version", range(1, 10))
def test_metadata_versions_1_to_9_read(tmp_path, storage, version):
    bag = write_bag(tmp_path / "bag", _js(20), storage=storage)

    def edit(info):
        info["version"] = version
        if version < 4:  # before v4 paths were relative to the bag's parent folder
            info["relative_file_paths"] = [f"bag/{p}" for p in info["relative_file_paths"]]
        if version < 5:
            info.pop("files", None)

    _edit_metadata(bag, edit)
    with open_bag(bag) as reader:
        assert reader.layout.version == version and reader.topics["/js"].count == 20
        assert len(list(reader.messages())) == 20


@pytest.mark.parametrize("version", [0, 10, "9"])
def test_unsupported_versions_are_refused_clearly(tmp_path, version):
    bag = write_bag(tmp_path / "bag", _js(5))
    _edit_metadata(bag, lambda info: info.update(version=version))
    with pytest.raises(
        BagError, match=rf"format version {version!r} is not supported \(this reader reads versions 1 to 9\)"
    ):
        open_bag(bag)


def _split_bag(tmp_path: Path, parts: int, per_part: int, storage="mcap") -> tuple[Path, list[str]]:
    """A bag folder of `parts` storage files named like rosbag2's splits (bag_0 .. bag_N-1), in time order."""
    folder = tmp_path / "split"
    folder.mkdir()
    suffix = ".mcap" if storage == "mcap" else ".db3"
    names = []
    for k in range(parts):
        part = write_bag(tmp_path / f"part{k}", _js(per_part, start=k * per_part), storage=storage)
        name = f"split_{k}{suffix}"
        shutil.move(part / f"part{k}{suffix}", folder / name)
        names.append(name)
    return folder, names


def test_split_files_without_metadata_read_in_numeric_order(tmp_path):
    folder, names = _split_bag(tmp_path, 12, 25)
    assert sorted(names)[:3] == ["split_0.mcap", "split_1.mcap", "split_10.mcap"]  # what a plain sort gives
    with open_bag(folder) as bag:
        assert [p.name for p in bag.layout.files] == names
        stamps = [m.log_time_ns for m in bag.messages()]
        assert len(stamps) == 300 and stamps == sorted(stamps)
        assert not bag.truncated
        assert any("no metadata.yaml" in n and "numeric order" in n for n in bag.notes)


def test_split_files_follow_the_metadata_listing(tmp_path):
    folder, names = _split_bag(tmp_path, 3, 10, storage="sqlite3")
    # metadata.yaml from a one-file bag, then listing the three files in a chosen (non-alphabetical) order
    ref = write_bag(tmp_path / "ref", _js(30), storage="sqlite3")
    shutil.copy(ref / "metadata.yaml", folder / "metadata.yaml")
    order = [names[2], names[0], names[1]]
    _edit_metadata(folder, lambda info: info.update(relative_file_paths=order))
    with open_bag(folder) as bag:
        assert [p.name for p in bag.layout.files] == order
        firsts = [int(bag.deserialize(m.data, m.msgtype).position[0]) for m in bag.messages()][::10]
        assert firsts == [20, 0, 10]


def test_count_disagreement_is_one_note_with_both_counts(tmp_path):
    bag = write_bag(tmp_path / "bag", _js(100))

    def edit(info):
        info["topics_with_message_count"][0]["message_count"] = 1000
        info["message_count"] = 1000

    _edit_metadata(bag, edit)
    with open_bag(bag) as reader:
        assert reader.topics["/js"].count == 100 and reader.topics["/js"].metadata_count == 1000
        assert len(reader.notes) == 1
        assert "metadata.yaml says 1000 messages, the storage holds 100" in reader.notes[0]
        assert "/js 1000 vs 100" in reader.notes[0]


def test_missing_listed_file_is_named(tmp_path):
    bag = write_bag(tmp_path / "bag", _js(5))
    (bag / "bag.mcap").unlink()
    with pytest.raises(BagError, match="lists storage files that are missing: bag.mcap"):
        open_bag(bag)


def test_nested_folders_of_bags_are_found(tmp_path):
    root = tmp_path / "recordings"
    for rel in ("day1/run_2", "day1/run_10", "day2/session/a", "loose"):
        write_bag(root / rel, _js(3))
    (root / "day3").mkdir()
    shutil.copy(root / "loose" / "loose.mcap", root / "day3" / "bare.mcap")  # a folder of storage files is a bag
    (root / "day2" / "notes.txt").write_text("not a bag")
    found = [p.relative_to(root).as_posix() for p in find_bags([root])]
    assert found == ["day1/run_2", "day1/run_10", "day2/session/a", "day3", "loose"]
    assert find_bags([root / "loose", root / "day3" / "bare.mcap"]) == [root / "loose", root / "day3" / "bare.mcap"]
    shutil.copy(root / "loose" / "loose.mcap", root / "day1" / "extra_1.mcap")  # loose files beside bag folders
    found = [p.relative_to(root).as_posix() for p in find_bags([root / "day1"])]
    assert found == ["day1/extra_1.mcap", "day1/run_2", "day1/run_10"]
