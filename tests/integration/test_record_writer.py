"""Episode bag writer, recovery, episode loop, session and QA — library level, no ROS graph needed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from rosbags.rosbag2 import Reader, ReaderError

from lerobot_ros.record.episode_bag_writer import BagWriteError, EpisodeBagWriter, WriterSettings, read_custom_data
from lerobot_ros.record.episode_loop import (
    DONE,
    IDLE,
    RECORDING,
    RESETTING,
    Command,
    EpisodeControl,
    Finish,
    Start,
    Stop,
)
from lerobot_ros.record.live_qa import Level, StreamQA, TopicQA, stream_report
from lerobot_ros.record.msgdefs import MessageDefinitions, UnknownMessageType
from lerobot_ros.record.repair import RepairError, repair_bag
from lerobot_ros.record.session import EpisodeError, EpisodeSession, TopicSpec, next_free_index
from lerobot_ros.testing.raw_messages import IMG, JS, SENSOR, TS, image, joint_state


def read_bag(path: Path) -> tuple[dict[str, int], dict, list]:
    with Reader(path) as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
        msgs = [(c.topic, t, raw) for c, t, raw in reader.messages()]
    meta = __import__("yaml").safe_load((path / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    return counts, meta, msgs


# ---- writer ------------------------------------------------------------------------------------------
def test_writer_settings_one_source_and_validation():
    """The node's and `lerobot-ros record`'s defaults are the writer's own: the node's config takes them from
    the writer, and the verb passes on only the flags given (the node's defaults apply to the rest)."""
    from lerobot_ros.cli import record as cli_record
    from lerobot_ros.cli.main import build_parser
    from lerobot_ros.record.config import WRITER_DEFAULTS, RecorderConfig

    assert WriterSettings("none", 0.5, 64 << 20) == WRITER_DEFAULTS
    node = RecorderConfig()
    assert WriterSettings(node.compression, node.flush_interval_s, int(node.min_free_mb * 2**20)) == WRITER_DEFAULTS
    args = build_parser("record").parse_args(["record", "--contract", "so101"])
    assert cli_record.ros_arguments(args) == ["--ros-args", "-p", "contract:=so101"]
    args = build_parser("record").parse_args(["record", "--contract", "so101", "--compression", "zstd"])
    assert cli_record.ros_arguments(args) == ["--ros-args", "-p", "contract:=so101", "-p", "compression:=zstd"]
    assert WriterSettings(compression=None).compression == "none"
    with pytest.raises(ValueError, match="compression must be 'none' or 'zstd', not 'lz4'"):
        WriterSettings(compression="lz4")
    with pytest.raises(ValueError, match="flush_interval_s must be positive, got 0"):
        WriterSettings(flush_interval_s=0)


@pytest.mark.parametrize("compression", [None, "zstd"])
def test_writer_roundtrip_metadata_and_bytes(tmp_path, compression):
    bag = tmp_path / "ep"
    w = EpisodeBagWriter(
        bag, settings=WriterSettings(compression=compression), custom_data={"task": "pick the cube"}
    ).open()
    w.add_topic("/joint_states", JS, [SENSOR])
    w.add_topic("/cam/image_raw", IMG)
    w.add_topic("/status", "lerobot_ros_msgs/msg/EpisodeStatus")  # our own type, from its installed .msg
    sent = []
    for i in range(250):
        sent.append(("/joint_states", 1_000_000_000 + i * 10_000_000, joint_state(i)))
        if i % 3 == 0:
            sent.append(("/cam/image_raw", 1_000_000_000 + i * 10_000_000, image(i)))
    for topic, t, data in sent:
        assert w.write(topic, t, data)
    result = w.close({"outcome": "success", "episode_index": "4"})
    assert result.error is None and result.readable and result.dropped == {}
    assert result.counts == {"/joint_states": 250, "/cam/image_raw": 84}

    counts, meta, msgs = read_bag(bag)
    assert counts == {"/joint_states": 250, "/cam/image_raw": 84, "/status": 0}
    assert sorted(msgs) == sorted(sent)  # the exact bytes, every one
    assert meta["version"] == 9 and meta["storage_identifier"] == "mcap" and meta["message_count"] == 334
    assert meta["starting_time"]["nanoseconds_since_epoch"] == 1_000_000_000
    assert meta["duration"]["nanoseconds"] == 249 * 10_000_000
    topics = {t["topic_metadata"]["name"]: t for t in meta["topics_with_message_count"]}
    assert topics["/joint_states"]["topic_metadata"]["type"] == JS
    assert topics["/joint_states"]["topic_metadata"]["offered_qos_profiles"][0]["reliability"] == "best_effort"
    assert topics["/status"]["topic_metadata"]["type_description_hash"].startswith("RIHS01_")
    assert meta["custom_data"] == {"task": "pick the cube", "outcome": "success", "episode_index": "4"}
    assert (meta["compression_format"], meta["compression_mode"]) == ("", "")
    from mcap.reader import make_reader  # the MCAP reference reader (as ros2 bag's storage plugin) agrees

    with open(bag / "ep.mcap", "rb") as fh:
        reader = make_reader(fh)
        summary = reader.get_summary()
        assert summary.statistics.message_count == 334 and summary.statistics.channel_message_counts[2] == 84
        assert {c.topic for c in summary.channels.values()} == {"/joint_states", "/cam/image_raw", "/status"}
        assert sum(1 for _ in reader.iter_messages(topics=["/cam/image_raw"])) == 84
    with Reader(bag) as reader:  # messages deserialize with the stored definitions
        conn = next(c for c in reader.connections if c.topic == "/joint_states")
        first = next(reader.messages([conn]))
        assert list(TS.deserialize_cdr(first[2], JS).position) == [0.0, 0.0]


def test_recorder_bags_name_their_ros_distro(tmp_path):
    """metadata.yaml (provisional and final), the MCAP metadata record and a repaired copy name the distro
    whose definitions the recorder stored (Kilted, the installed wheels': the hashes match rosidl's), never
    rosbags' placeholder 'rosbags'."""
    import yaml
    from mcap.reader import make_reader

    def distro(folder: Path) -> str:
        return yaml.safe_load((folder / "metadata.yaml").read_text())["rosbag2_bagfile_information"]["ros_distro"]

    bag = tmp_path / "ep"
    w = EpisodeBagWriter(bag, custom_data={"task": "t"}).open()
    assert distro(bag) == "kilted"  # the provisional metadata a killed recorder leaves behind
    w.add_topic("/joint_states", JS)
    for i in range(5):
        w.write("/joint_states", i, joint_state(i))
    w.close({"outcome": "success"})
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["ros_distro"] == "kilted" and meta["custom_data"]["outcome"] == "success" and meta["message_count"] == 5
    rosidl = json.loads((Path(sys.prefix) / "share" / f"{JS}.json").read_text())
    assert meta["topics_with_message_count"][0]["topic_metadata"]["type_description_hash"] == next(
        h["hash_string"] for h in rosidl["type_hashes"] if h["type_name"] == JS
    )
    with open(bag / "ep.mcap", "rb") as fh:
        record = next(m for m in make_reader(fh).iter_metadata() if m.name == "rosbag2")
    assert (
        "ros_distro: kilted" in record.metadata["serialized_metadata"]
        and "rosbags" not in record.metadata["serialized_metadata"]
    )
    assert read_bag(bag)[0] == {"/joint_states": 5}
    mcap = bag / "ep.mcap"
    mcap.write_bytes(mcap.read_bytes()[:-200])  # a killed recorder: no footer
    repair_bag(bag, tmp_path / "repaired")
    assert distro(tmp_path / "repaired") == "kilted"


def test_writer_never_overwrites(tmp_path):
    bag = tmp_path / "ep"
    bag.mkdir()
    (bag / "keep.txt").write_text("precious")
    with pytest.raises(BagWriteError, match="never overwritten"):
        EpisodeBagWriter(bag).open()
    assert (bag / "keep.txt").read_text() == "precious"


def test_writer_refuses_to_start_on_a_full_disk(tmp_path):
    free = shutil.disk_usage(tmp_path).free
    with pytest.raises(BagWriteError, match=r"disk nearly full: \d+ MiB free .*choose another output dir"):
        EpisodeBagWriter(tmp_path / "ep", settings=WriterSettings(min_free_bytes=free * 2)).open()
    assert not (tmp_path / "ep").exists()


def test_an_output_folder_that_cannot_be_made_is_a_clear_error(tmp_path):
    """The recorder catches BagWriteError: a raw OSError here killed the node with a traceback."""
    (tmp_path / "a_file").write_text("not a folder")
    with pytest.raises(BagWriteError, match=r"^cannot create .*a_file/episodes: Not a directory$"):
        EpisodeBagWriter(tmp_path / "a_file" / "episodes" / "ep").open()


def test_a_disk_that_fills_as_the_episode_opens_leaves_no_episode_folder(tmp_path, monkeypatch):
    """ENOSPC on the first metadata write (just after the free-space check): one line, the writer closed, the
    episode folder removed (an open half MCAP was left behind)."""
    import errno

    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(EpisodeBagWriter, "_write_provisional_metadata", full)
    with pytest.raises(BagWriteError, match=r"^cannot write bag .*ep: No space left on device$"):
        EpisodeBagWriter(tmp_path / "ep").open()
    assert not (tmp_path / "ep").exists()


def test_a_device_that_goes_away_mid_episode_still_gives_a_result(tmp_path, monkeypatch):
    """The write fails, then cutting the file back fails too (the USB disk was pulled): that second error killed the
    writer thread, and close() raised AssertionError in the recorder node. Both failures are injected."""
    import errno

    w = EpisodeBagWriter(tmp_path / "ep").open()
    w.add_topic("/js", JS)

    def gone(*args):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(w, "_handle", lambda item: gone() if item[0] == "/js" else EpisodeBagWriter._handle(w, item))
    monkeypatch.setattr(w, "_rollback", gone)
    w.write("/js", 1, b"\x00" * 8)
    result = w.close({"outcome": "failure"})
    assert result.error.startswith(
        "write failed: [Errno 5] Input/output error; cutting the bag back to its last "
        "whole chunk failed: [Errno 5] Input/output error"
    )


def test_unknown_message_type_is_a_clear_error(tmp_path):
    w = EpisodeBagWriter(tmp_path / "ep").open()
    with pytest.raises(UnknownMessageType, match="no definition for message type 'nope_msgs/msg/Thing'"):
        w.add_topic("/x", "nope_msgs/msg/Thing")
    w.close()
    assert MessageDefinitions().get("sensor_msgs/Image")[1].startswith("RIHS01_")


def test_closed_chunks_reach_the_disk_while_recording(tmp_path):
    """What a SIGKILL would leave: a copy of the open file recovers everything older than the flush interval."""
    bag = tmp_path / "ep"
    w = EpisodeBagWriter(bag, settings=WriterSettings(flush_interval_s=0.2), custom_data={"task": "reach"}).open()
    w.add_topic("/joint_states", JS)
    for i in range(40):
        w.write("/joint_states", i * 10_000_000, joint_state(i))
    copy = tmp_path / "copy"
    deadline = time.monotonic() + 20
    while True:  # poll: the writer thread closes the chunk within ~flush_interval
        shutil.rmtree(copy, ignore_errors=True)
        copy.mkdir()
        shutil.copy(bag / "ep.mcap", copy / "ep.mcap")
        shutil.copy(bag / "metadata.yaml", copy / "metadata.yaml")  # the provisional one
        shutil.rmtree(tmp_path / "rep", ignore_errors=True)
        try:
            got = repair_bag(copy, tmp_path / "rep").topics
        except RepairError:
            got = {}
        if got.get("/joint_states") == 40 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert got == {"/joint_states": 40}
    assert read_custom_data(copy) == {"task": "reach", "outcome": "recording"}
    assert read_custom_data(tmp_path / "rep") == {"task": "reach", "outcome": "interrupted", "repaired_from": str(copy)}
    with pytest.raises(
        ReaderError, match="File end magic is invalid"
    ):  # rosbags alone rejects the file of a killed writer
        with Reader(copy / "ep.mcap"):
            pass
    w.close()


DISK_FULL_CHILD = textwrap.dedent("""
    import json, resource, signal, sys
    from lerobot_ros.testing.raw_messages import image, joint_state
    from lerobot_ros.record.episode_bag_writer import EpisodeBagWriter, WriterSettings
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)           # a full file system: writes fail with an OSError
    resource.setrlimit(resource.RLIMIT_FSIZE, (3_000_000, 3_000_000))
    errors = []
    w = EpisodeBagWriter({bag!r}, settings=WriterSettings(flush_interval_s=0.05, min_free_bytes=0), on_error=errors.append,
                         custom_data={{"task": "t"}}).open()
    w.add_topic("/cam/image_raw", "sensor_msgs/msg/Image")
    w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    import time
    for i in range(400):
        w.write("/cam/image_raw", i * 1000, image(i, 96, 128))   # ~37 kB each: ~15 MB in all, > the limit
        w.write("/joint_states", i * 1000 + 1, joint_state(i))
        time.sleep(0.005)
    r = w.close({{"outcome": "success"}})
    print(json.dumps({{"error": r.error, "counts": r.counts, "dropped": r.dropped, "readable": r.readable,
                      "callback": errors}}))
""")


@pytest.mark.slow
def test_disk_full_stops_the_episode_and_keeps_a_readable_bag(tmp_path):
    bag = tmp_path / "ep"
    code = DISK_FULL_CHILD.format(bag=str(bag))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["error"].startswith("write failed:") and "File too large" in out["error"]
    assert out["callback"] == [out["error"]]
    assert out["readable"] is True
    written = out["counts"]
    assert 0 < written["/cam/image_raw"] < 400 and sum(out["dropped"].values()) > 0
    assert written["/cam/image_raw"] + out["dropped"]["/cam/image_raw"] == 400
    counts, meta, msgs = read_bag(bag)  # rosbags reads it as is: no repair needed
    assert counts == written and len(msgs) == sum(written.values())
    assert meta["custom_data"]["error"] == out["error"] and meta["custom_data"]["task"] == "t"
    assert (bag / "ep.mcap").stat().st_size <= 3_000_000


# ---- recovery -------------------------------------------------------------------------------------------
def test_recover_truncated_bag_at_any_cut(tmp_path):
    bag = tmp_path / "ep"
    w = EpisodeBagWriter(
        bag, settings=WriterSettings(flush_interval_s=0.01), custom_data={"task": "stack", "episode_index": "3"}
    ).open()
    w.add_topic("/joint_states", JS)
    w.add_topic("/cam/image_raw", IMG)
    for i in range(60):
        w.write("/joint_states", i, joint_state(i))
        w.write("/cam/image_raw", i, image(i, 120, 160))  # ~58 kB: several chunks
        if i % 10 == 9:
            time.sleep(0.05)
    w.close()
    data = (bag / "ep.mcap").read_bytes()
    previous = -1
    for fraction in (0.3, 0.6, 0.9, 0.999):
        cut = tmp_path / f"cut{fraction}"
        cut.mkdir()
        (cut / "ep.mcap").write_bytes(data[: int(len(data) * fraction)])
        shutil.copy(bag / "metadata.yaml", cut / "metadata.yaml")
        result = repair_bag(cut, tmp_path / f"rep{fraction}")
        counts, meta, msgs = read_bag(tmp_path / f"rep{fraction}")
        total = sum(counts.values())
        assert total == result.messages and not result.complete and total >= previous and total < 120
        previous = total
        # what survives is a prefix of what was written, byte for byte
        assert [m[2] for m in msgs if m[0] == "/joint_states"] == [
            joint_state(i) for i in range(counts["/joint_states"])
        ]
        assert meta["custom_data"]["task"] == "stack" and meta["custom_data"]["episode_index"] == "3"
        assert meta["custom_data"]["outcome"] == "interrupted"
    assert previous >= 100  # a cut at 99.9 % loses at most the last chunk
    with pytest.raises(RepairError, match="exists already"):
        repair_bag(bag, tmp_path / "rep0.3")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RepairError, match="no .mcap file in this folder"):
        repair_bag(tmp_path / "empty", tmp_path / "x")
    with pytest.raises(RepairError, match="does not exist"):
        repair_bag(tmp_path / "missing", tmp_path / "x")


def test_repair_cli_in_place(tmp_path):
    from lerobot_ros.cli.main import main

    bag = tmp_path / "episode_000000"
    w = EpisodeBagWriter(bag, settings=WriterSettings(flush_interval_s=0.01), custom_data={"task": "t"}).open()
    w.add_topic("/joint_states", JS)
    for i in range(30):
        w.write("/joint_states", i, joint_state(i))
    w.close()
    mcap = bag / "episode_000000.mcap"
    mcap.write_bytes(mcap.read_bytes()[:-200])  # lose the footer
    assert main(["repair", str(bag), "--in_place"]) == 0
    counts, meta, _ = read_bag(bag)
    assert counts == {"/joint_states": 30} and meta["custom_data"]["task"] == "t"
    assert meta["custom_data"]["outcome"] == "interrupted"
    assert (tmp_path / "episode_000000.truncated" / "episode_000000.mcap").is_file()
    assert main(["repair", str(tmp_path / "nothing_here")]) == 1


# ---- episode loop ---------------------------------------------------------------------------------------
def test_automatic_loop_like_lerobot_record():
    c = EpisodeControl(episode_time_s=10, reset_time_s=5, num_episodes=2)
    assert c.tick(0.0) == [Start()] and c.state == RECORDING
    assert c.tick(9.9) == []
    assert c.tick(10.0) == [Stop("success")] and c.state == RESETTING
    assert c.tick(14.0) == []
    assert c.tick(15.0) == [Start()]
    assert c.command("rerecord", 16.0) == [Stop("discard")] and c.state == RESETTING and c.kept == 1
    assert c.command("next", 17.0) == [Start()]  # skip the rest of the reset
    assert c.command("next", 18.0) == [Stop("success"), Finish()] and c.state == DONE and c.kept == 2
    assert c.tick(100.0) == [] and c.command("next", 100.0) == []


def test_manual_loop_and_stop_key():
    c = EpisodeControl()
    assert not c.automatic and c.tick(50.0) == [] and c.state == IDLE
    assert c.command("next", 0.0) == [Start()]
    assert c.command("rerecord", 1.0) == [Stop("discard"), Start()]
    assert c.command("next", 2.0) == [Stop("success")] and c.state == IDLE and c.kept == 1
    assert c.command("next", 3.0) == [Start()]
    assert c.command("stop", 4.0) == [Stop("success"), Finish()] and c.kept == 2
    with pytest.raises(ValueError, match="unknown command 'jump'; use one of next, rerecord, stop"):
        c.command("jump", 5.0)
    assert Command.parse("rerecord") is Command.RERECORD and c.state == DONE == "done"  # states read as their names
    with pytest.raises(ValueError, match=">= 0"):
        EpisodeControl(episode_time_s=-1)


def test_services_keep_the_loop_consistent():
    c = EpisodeControl(episode_time_s=5, reset_time_s=0, num_episodes=3)
    c.started(0.0)
    assert c.stopped("failure", 1.0) == [Start()] and c.kept == 1  # no reset time: next one right away
    assert c.stopped("discard", 2.0) == [] and c.kept == 1


# ---- session ----------------------------------------------------------------------------------------------
def test_session_numbering_discard_and_outcomes(tmp_path):
    (tmp_path / "episode_000002").mkdir()  # left by an earlier session: never reused
    (tmp_path / "episode_000002" / "x").write_text("old")
    assert next_free_index(tmp_path) == 3
    s = EpisodeSession(tmp_path, contract_text="fps: 30\n", contract_path="c.yaml", task_key="task")
    s.add_topic(TopicSpec("/joint_states", JS, [SENSOR], expected_hz=30.0))
    s.write("/joint_states", 1, joint_state(1))  # not recording: dropped
    index, path = s.start("pour")
    assert (index, path.name) == (3, "episode_000003")
    with pytest.raises(EpisodeError, match="already recording"):
        s.start()
    for i in range(5):
        s.write("/joint_states", 10 + i, joint_state(i))
    assert s.stop("discard") is None and not path.exists()
    index, path = s.start()  # the discarded index is recorded again
    assert index == 3 and s.task == "pour"
    for i in range(7):
        s.write("/joint_states", 10 + i, joint_state(i))
    result = s.stop("failure")
    assert result.counts == {"/joint_states": 7}
    _, meta, _ = read_bag(path)
    custom = meta["custom_data"]
    assert custom["outcome"] == "failure" and custom["task"] == "pour" and custom["episode_index"] == "3"
    assert custom["contract"] == "fps: 30\n" and custom["contract_path"] == "c.yaml"
    assert int(custom["stop_ns"]) >= int(custom["start_ns"]) > 0
    qa = json.loads(custom["qa"])
    assert qa["fps"] == 30 and qa["streams"]["/joint_states"]["samples"] == 7
    assert s.start()[0] == 4
    with pytest.raises(EpisodeError, match="unknown outcome 'meh'"):
        s.stop("meh")
    assert s.close().custom_data["outcome"] == "interrupted"  # SIGTERM / Ctrl-C path
    with pytest.raises(EpisodeError, match="no episode is recording"):
        s.stop()
    assert (tmp_path / "episode_000002" / "x").read_text() == "old"


# ---- QA ---------------------------------------------------------------------------------------------------
MS = 1_000_000


def test_episode_qa_is_the_resamplers_report():
    stamps = [k * 10 * MS for k in range(30)] + [500 * MS + k * 10 * MS for k in range(51)]  # 100 Hz, a 210 ms hole
    rep = stream_report("/js", stamps, fps=30, start_ns=0, end_ns=1000 * MS, policy="asof", tolerance_ns=50 * MS)
    assert rep.samples == 81 and rep.gaps == 1 and rep.max_gap_ms == pytest.approx(210.0)
    assert rep.frames == 31  # 0 .. 1000 ms at 30 fps
    assert rep.stale_frames == 4  # frames at 366.7 .. 466.7 ms: the last sample (290 ms) is > 50 ms old
    assert rep.max_staleness_ms == pytest.approx(466.666667 - 290.0, abs=0.01)
    assert rep.warnings() and "4 frame(s) had no sample within 50 ms" in rep.warnings()[0]
    assert stream_report("/x", stamps, fps=None, start_ns=0, end_ns=1000 * MS).frames == 0


def test_live_qa_flags_slow_stalled_and_silent_streams():
    qa = StreamQA(stall_timeout_s=0.5, window_s=2.0)
    qa.add_stream("/fast", 30.0)
    qa.add_stream("/slow", 30.0)
    qa.add_stream("/silent", 30.0)
    qa.add_stream("/task", None)  # sporadic: never a rate or stall warning
    for k in range(200):
        qa.observe("/fast", k * 10 * MS)
    for k in range(20):
        qa.observe("/slow", k * 100 * MS)
    qa.observe("/task", 0)
    snap = qa.snapshot(now_ns=1995 * MS, started_ns=0)
    assert snap["/fast"].level is Level.OK and snap["/fast"].rate_hz == pytest.approx(100.0)
    assert snap["/fast"].count == 200 and snap["/fast"].frames == 60 and snap["/fast"].missing_frames == 0
    assert snap["/slow"].level is Level.WARN and "below the contract's 30 Hz" in snap["/slow"].message
    assert snap["/silent"].level == 1 and snap["/silent"].message.startswith("no message for 2.0 s")
    assert snap["/silent"].missing_frames == 60
    assert snap["/task"].level is Level.OK
    assert (
        isinstance(snap["/fast"], TopicQA)
        and set(snap["/fast"].values()) >= {"count", "rate_hz", "stalls", "last_age_s"}
        and "level" not in snap["/fast"].values()
    )
    later = qa.snapshot(now_ns=3000 * MS, started_ns=0)
    assert later["/fast"].message == "stalled: last message 1.0 s ago" and later["/fast"].stalls == 1
    assert qa.snapshot(now_ns=3100 * MS, started_ns=0)["/fast"].stalls == 1  # one stall, counted once
    report = qa.report(0, 3000 * MS)
    assert report["fps"] == 30 and report["frames"] == 91
    assert report["streams"]["/fast"]["samples"] == 200 and report["streams"]["/fast"]["rate_hz"] == pytest.approx(
        100.0
    )
    assert report["stalls"]["/fast"] == 1 and report["streams"]["/silent"]["missing_frames"] == 91
    assert any("/silent: 91 frame(s) had no value at all" in w for w in report["warnings"])


def test_live_qa_shows_the_share_of_frames_holding_an_old_sample():
    """A command stream at 4 Hz in a 30 fps recording: the live QA says what share of frames hold a command older
    than its tolerance (a /diagnostics value), and the episode's report warns about it."""
    qa = StreamQA(stall_timeout_s=5.0, window_s=2.0)
    qa.add_stream("/commands", 30.0, "hold", 100 * MS)
    for k in range(9):
        qa.observe("/commands", k * 250 * MS)
    snap = qa.snapshot(now_ns=2000 * MS, started_ns=0)
    share = snap["/commands"].held_old_share
    assert 0.45 < share < 0.6 and snap["/commands"].values()["held_old_share"] == share
    report = qa.report(0, 2000 * MS)
    assert any(w.startswith("/commands: ") and "repeat a sample older than 100 ms" in w for w in report["warnings"])


# ---- copy-saving MCAP storage ----------------------------------------------------------------------------
@pytest.mark.parametrize("compression", [False, True])
def test_fast_mcap_storage_writes_the_same_bytes_as_rosbags(tmp_path, compression):
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.rosbag2.enums import CompressionFormat, CompressionMode

    from lerobot_ros.record.fast_mcap_writer import FastMcapWriter

    rng = np.random.default_rng(0)
    payloads = [bytes(rng.integers(0, 255, n, dtype=np.uint8)) for n in (200, 921_700, 50, 300_000)]

    def write(root: Path, fast: bool) -> bytes:
        w = Writer(root / "ep", version=9, storage_plugin=StoragePlugin.MCAP)
        if fast:
            w.STORAGE_PLUGINS = {**Writer.STORAGE_PLUGINS, StoragePlugin.MCAP: FastMcapWriter}
        if compression:
            w.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
        w.open()
        a = w.add_connection("/cam", IMG, typestore=TS)
        b = w.add_connection("/js", JS, typestore=TS)
        for i in range(40):  # several chunks, both channels in most of them
            w.write(a if i % 2 else b, 1000 + 7 * i, payloads[i % 4])
        w.close()
        return (root / "ep" / "ep.mcap").read_bytes()

    reference = write(tmp_path / "rosbags", fast=False)
    assert write(tmp_path / "fast", fast=True) == reference
