"""`lerobot-ros convert`: bags from rosbags in both storages and image types -> LeRobotDataset that
reloads with the expected values; each bad input gets a one-line error and the other bags still convert."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from lerobot_ros.bag import BagWriter, write_bag
from lerobot_ros.cli.main import main
from lerobot_ros.codecs import numpy_to_image, numpy_to_joint_state
from lerobot_ros.testing.bags import JOINTS, T0, camera_frame, joint_positions, so101_messages, write_so101_bag
from lerobot_ros.testing.datasets import H, W, contract_file, load

pytestmark = pytest.mark.slow


def run_cli(*argv) -> int:
    return main(["convert", *map(str, argv), "--progress=false"])


def test_convert_storages_and_image_encodings(tmp_path, capsys):
    bags = tmp_path / "bags"
    write_so101_bag(bags / "mcap_v9", 1.0, cameras={"front": (H, W)}, task="pick the cube")
    write_so101_bag(
        bags / "sqlite_v8_zstd",
        1.0,
        storage="sqlite3",
        version=8,
        compression="zstd",
        custom_data={"task": "from metadata"},
        cameras={"front": (H, W)},
    )
    raw_bags = tmp_path / "raw"
    write_so101_bag(raw_bags / "rgb8", 1.0, compressed=False, encoding="rgb8", task="raw rgb")
    write_so101_bag(raw_bags / "bgr8", 1.0, storage="sqlite3", compressed=False, encoding="bgr8", task="raw bgr")
    out = tmp_path / "ds"
    assert (
        run_cli(bags / "mcap_v9", bags / "sqlite_v8_zstd", "--contract", contract_file(tmp_path), "--dataset.root", out)
        == 0
    )
    out_raw = tmp_path / "ds_raw"
    assert (
        run_cli(
            raw_bags,
            "--contract",
            contract_file(tmp_path, "sensor_msgs/msg/Image", "/front/image_raw"),
            "--dataset.root",
            out_raw,
            "--dataset.rgb_encoder.vcodec",
            "h264",
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "observation.state" in text and "QA report:" in text
    for root, tasks in ((out, ["pick the cube", "from metadata"]), (out_raw, ["raw bgr", "raw rgb"])):
        ds = load(root)
        assert ds.num_episodes == 2 and ds.num_frames == 62  # 1 s at 30 fps, both ends included
        assert [ds[int(e["dataset_from_index"])]["task"] for e in ds.meta.episodes] == tasks
        columns = ds.hf_dataset.with_format("numpy")
        state = np.stack(columns["observation.state"][:31])
        expected = np.rad2deg(joint_positions(np.arange(31) / 30))
        np.testing.assert_allclose(state, expected, atol=0.05)  # 100 Hz samples, linear interpolation
        action = np.stack(columns["action"][:31])
        frames_ns = np.arange(31) * 1_000_000_000 // 30
        cmd_ns = np.round(np.arange(31) * 1e9 / 30).astype(np.int64)
        held = np.searchsorted(cmd_ns, frames_ns, side="right") - 1  # hold: the command at or before each frame
        np.testing.assert_allclose(action, np.rad2deg(joint_positions(held / 30 + 0.05)), atol=1e-3)
        img = (ds[10]["observation.images.front"].numpy().transpose(1, 2, 0) * 255).astype(np.float32)
        assert np.abs(img - camera_frame(10, H, W)).mean() < 12  # lossy video, same picture
        report = json.loads((root / "meta" / "lerobot_ros_qa.json").read_text())
        assert report["summary"]["episodes_written"] == 2
        assert (root / "meta" / "lerobot_ros_contract.yaml").is_file()
        assert not list(tmp_path.glob(".*partial*"))


def _bad_bags(tmp_path: Path) -> dict[str, Path]:
    bags = tmp_path / "bags"
    out = {"good": write_so101_bag(bags / "good", 1.0, task="good")}
    out["empty"] = write_bag(bags / "empty", [])
    from std_msgs.msg import String

    padding = [("/padding", "std_msgs/msg/String", T0 + i * 100_000_000, String(data="x" * 300_000)) for i in range(30)]
    full = write_bag(
        tmp_path / "full", sorted([*so101_messages(3.0, task="t"), *padding], key=lambda m: m[2])
    )  # ~1 MiB chunks
    data = (full / "full.mcap").read_bytes()
    (bags / "corrupt.mcap").write_bytes(b"\x89MCAP0\r\n" + bytes(200))
    out["corrupt"] = bags / "corrupt.mcap"
    (bags / "truncated.mcap").write_bytes(data[: len(data) // 2])  # converts: complete chunks only
    out["truncated"] = bags / "truncated.mcap"
    out["missing_topic"] = write_bag(
        bags / "missing_topic", [m for m in so101_messages(1.0, task="t") if "front" not in m[0]]
    )
    with BagWriter(bags / "unknown_type") as w:
        from rosbags.typesys import get_types_from_msg

        w.typestore.register(get_types_from_msg("float64 x", "foo_msgs/msg/Bar"))
        for topic, msgtype, t, msg in so101_messages(1.0, task="t"):
            if topic == "/follower/joint_states":
                w.add_topic(topic, "foo_msgs/msg/Bar")
                w.write(topic, t, b"\x00\x01\x00\x00" + np.float64(1.0).tobytes())
            else:
                w.add_topic(topic, msgtype)
                w.write(topic, t, msg)
    out["unknown_type"] = bags / "unknown_type"
    with BagWriter(bags / "silent_topic") as w:  # the camera subscribed, but it published nothing
        w.add_topic("/front/image_raw/compressed", "sensor_msgs/msg/CompressedImage")
        for topic, msgtype, t, msg in so101_messages(1.0, task="t"):
            if "front" not in topic:
                w.add_topic(topic, msgtype)
                w.write(topic, t, msg)
    out["silent_topic"] = bags / "silent_topic"
    msgs = list(so101_messages(1.0, task="t"))
    swapped = []
    for topic, msgtype, t, msg in msgs:  # one joint state stamped 50 ms in the past
        if topic == "/follower/joint_states" and t == T0 + 500_000_000 + 200_000:
            msg = numpy_to_joint_state(JOINTS, position=np.zeros(6), stamp_ns=T0 + 450_000_000 + 5)
        swapped.append((topic, msgtype, t, msg))
    out["non_monotonic"] = write_bag(bags / "non_monotonic", swapped)
    resized = []
    for topic, msgtype, t, msg in so101_messages(1.0, compressed=False, task="t"):
        if topic == "/front/image_raw" and t > T0 + 500_000_000:
            msg = numpy_to_image(np.zeros((H // 2, W // 2, 3), np.uint8), "rgb8", stamp_ns=t - 1_000_000)
        resized.append((topic.replace("/image_raw", "/image_raw/compressed") if False else topic, msgtype, t, msg))
    out["resized"] = write_bag(bags / "resized", resized)
    late = [m for m in so101_messages(1.0, task="t") if not (m[0].startswith("/front") and m[2] > T0 + 300_000_000)]
    late = [m for m in late if not (m[0] == "/follower/joint_states" and m[2] < T0 + 600_000_000)]
    out["zero_length"] = write_bag(bags / "zero_length", late)
    return out


def test_bad_inputs_one_line_each_others_convert(tmp_path, capsys):
    bags = _bad_bags(tmp_path)
    contract = contract_file(tmp_path)
    raw_contract = contract_file(tmp_path, "sensor_msgs/msg/Image", "/front/image_raw")
    out = tmp_path / "ds"
    ordered = [
        bags[k]
        for k in (
            "good",
            "empty",
            "corrupt",
            "truncated",
            "missing_topic",
            "silent_topic",
            "unknown_type",
            "non_monotonic",
            "zero_length",
        )
    ]
    assert run_cli(*ordered, "--contract", contract, "--dataset.root", out) == 1
    text = capsys.readouterr().out
    errors = [line for line in text.splitlines() if line.startswith("error: ")]
    expect = {
        "empty": "the bag is empty",
        "corrupt": "damaged or truncated MCAP with no complete message chunk",
        "missing_topic": "contract topic /front/image_raw/compressed (observation.images.front) is not in the bag",
        "silent_topic": "contract topic /front/image_raw/compressed (observation.images.front) has no messages in the "
        "bag: it was subscribed, but its publisher sent nothing while the episode recorded",
        "unknown_type": "topic /follower/joint_states is foo_msgs/msg/Bar in the bag, the contract expects sensor_msgs/msg/JointState",
        "zero_length": "zero-length episode",
    }
    for name, problem in expect.items():
        assert any(str(bags[name]) in line and problem in line for line in errors), (name, errors)
    assert len(errors) == len(expect)
    assert any(
        "non_monotonic episode 0: observation.state: dropped 1 out-of-order sample" in line
        for line in text.splitlines()
    )
    assert any("truncated.mcap: truncated bag" in line for line in text.splitlines())
    ds = load(out)
    assert ds.num_episodes == 3  # good, truncated (first half), non_monotonic (a warning only)
    report = json.loads((out / "meta" / "lerobot_ros_qa.json").read_text())
    assert report["summary"]["bags_failed"] == 6
    nm = next(b for b in report["bags"] if b["bag"].endswith("non_monotonic"))
    assert nm["episodes"][0]["streams"]["observation.state"]["dropped_out_of_order"] == 1

    # images changing size mid-bag (raw Image), and --strict turning the warning into a failure
    out2 = tmp_path / "ds2"
    assert run_cli(bags["resized"], "--contract", raw_contract, "--dataset.root", out2) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("error: "))
    assert str(bags["resized"]) in line and "images on /front/image_raw change size mid-bag (64x48 -> 32x24)" in line
    assert not out2.exists()  # nothing converted -> no dataset
    out3 = tmp_path / "ds3"
    assert run_cli(bags["good"], bags["non_monotonic"], "--contract", contract, "--dataset.root", out3, "--strict") == 1
    assert "--strict" in capsys.readouterr().out
    assert load(out3).num_episodes == 1


def test_cli_usage_errors(tmp_path, capsys):
    bag = write_so101_bag(tmp_path / "b", 0.5, task="t")
    assert run_cli(bag, "--contract", "nope", "--dataset.root", tmp_path / "x") == 1
    assert "no contract named 'nope'" in capsys.readouterr().err
    (tmp_path / "exists").mkdir()
    assert run_cli(bag, "--contract", contract_file(tmp_path), "--dataset.root", tmp_path / "exists") == 1
    assert "exists already" in capsys.readouterr().err
    assert (
        run_cli(
            bag,
            "--contract",
            contract_file(tmp_path),
            "--dataset.root",
            tmp_path / "y",
            "--dataset.rgb_encoder.vcodec",
            "mpeg2",
        )
        == 1
    )
    assert "unknown dataset.rgb_encoder.vcodec 'mpeg2'" in capsys.readouterr().err


def many_cores(monkeypatch) -> list[int]:
    """Pretend this machine has 8 cores, so --num_workers N starts decode processes; returns their counts."""
    from lerobot_ros.dataset import parallel

    started: list[int] = []

    class Recorded(parallel.DecodePool):
        def __init__(self, jobs, workers):
            super().__init__(jobs, workers)
            started.append(self.n)

    monkeypatch.setattr(parallel, "usable_cores", lambda: 8)
    monkeypatch.setattr(parallel, "DecodePool", Recorded)
    return started


def test_decode_processes_only_beside_the_encoder():
    from lerobot_ros.dataset.parallel import decode_processes

    assert decode_processes(2, 4, cores=2) == 0  # the encoder keeps both cores busy: decode here
    assert (
        decode_processes(4, 4, cores=4) == 2
        and decode_processes(4, 3, cores=16) == 2
        and decode_processes(1, 9, cores=16) == 1
    )


def test_episode_boundary_splits_a_bag_and_workers(tmp_path, monkeypatch):
    from lerobot_ros.codecs import ns_to_time
    from lerobot_ros_msgs.msg import EpisodeStatus

    msgs = list(so101_messages(2.0, task=None))
    for t, index, task in ((T0, 0, "first"), (T0 + 1_000_000_000, 1, "second")):
        status = EpisodeStatus(episode_index=index, task=task)
        status.header.stamp = ns_to_time(t)
        msgs.append(("/episode_status", "lerobot_ros_msgs/msg/EpisodeStatus", t, status))
    msgs.sort(key=lambda m: m[2])
    bag = write_bag(tmp_path / "two_episodes", msgs)
    other = write_so101_bag(tmp_path / "one", 0.5, task="third")
    contract = contract_file(tmp_path, episode_boundary={"topic": "/episode_status"})
    out = tmp_path / "ds"
    started = many_cores(monkeypatch)
    assert run_cli(bag, other, "--contract", contract, "--dataset.root", out, "--num_workers", "2") == 0
    assert started == [1]
    ds = load(out)
    assert [int(e["length"]) for e in ds.meta.episodes] == [30, 31, 16]
    assert [ds[int(e["dataset_from_index"])]["task"] for e in ds.meta.episodes] == ["first", "second", "third"]


def test_task_and_boundary_topics_of_the_wrong_type_are_one_line(tmp_path, capsys):
    """A bag whose task topic carries Float64, or whose boundary topic carries String: the
    contract points at the wrong topic; say so (it was an AttributeError on `.data` / `.episode_index`)."""
    from std_msgs.msg import Float64, String

    msgs = list(so101_messages(0.5, task=None))
    msgs.append(("/task", "std_msgs/msg/Float64", T0, Float64(data=1.0)))
    msgs.append(("/episode_status", "std_msgs/msg/String", T0, String(data="episode 0")))
    msgs.sort(key=lambda m: m[2])
    bag = write_bag(tmp_path / "bag", msgs)
    out = tmp_path / "ds"
    assert run_cli(bag, "--contract", contract_file(tmp_path), "--dataset.root", out) == 1
    assert (
        "the contract's task topic /task is std_msgs/msg/Float64 in the bag, not std_msgs/msg/String or "
        "lerobot_ros_msgs/msg/EpisodeStatus; point `task: {topic: ...}` at the right topic"
    ) in printed(capsys)
    contract = contract_file(tmp_path, task={"topic": "/nowhere"}, episode_boundary={"topic": "/episode_status"})
    assert run_cli(bag, "--contract", contract, "--dataset.root", out) == 1
    assert (
        "the contract's episode_boundary topic /episode_status is std_msgs/msg/String in the bag, not "
        "lerobot_ros_msgs/msg/EpisodeStatus"
    ) in printed(capsys)
    assert not out.exists()


def test_header_stamps_on_another_clock_than_the_recorder_are_one_line(tmp_path, capsys):
    """The sim stamped its messages with sim time (from 0) and the recorder logged them on wall time: the state
    (header timeline) and the actions (receive timeline) would be 1.7e9 s apart; the converter says why."""
    msgs = []
    for topic, msgtype, t, msg in so101_messages(0.5, task="pick"):
        if hasattr(msg, "header"):
            stamp = msg.header.stamp
            stamp.sec -= T0 // 1_000_000_000  # the same motion, stamped from 0
        msgs.append((topic, msgtype, t, msg))
    bag = write_bag(tmp_path / "bag", msgs)
    out = tmp_path / "ds"
    assert run_cli(bag, "--contract", contract_file(tmp_path), "--dataset.root", out) == 1
    text = printed(capsys)
    assert (
        f"is stamped -{T0 // 1_000_000_000} s from when the bag logged it, and the contract compares its header stamps with"
        in text
    )
    assert "record with one clock (use_sim_time on both), or set `timeline: receive` on" in text and not out.exists()


def printed(capsys) -> str:
    """What the converter printed (its per-bag report on stdout names each bag's failure), lines joined."""
    captured = capsys.readouterr()
    return " ".join((captured.out + captured.err).split())


def test_ctrl_c_leaves_a_dataset_that_loads(tmp_path, ros_env):
    """Ctrl-C during a conversion: the episodes already saved form a dataset that loads.

    The third bag is a FIFO: the converter blocks on it, and our write end opening (possible only once the
    converter opened it for reading, i.e. after the first two bags were saved) tells us so. Held open
    and never written, it keeps the converter reading when the signal lands: no race with a fast machine.
    Closed right after the signal, it lets the read return: a signal that Python took just before the
    converter entered that read (its handler only sets a flag) is then acted on at the next bytecode instead
    of waiting behind a read that no real bag would block for ever."""
    bags = tmp_path / "bags"
    for i in range(2):
        write_so101_bag(bags / f"b{i}", 2.0, task=f"task {i}")
    (bags / "b2").mkdir()
    fifo = bags / "b2" / "b2.mcap"
    os.mkfifo(fifo)
    out = tmp_path / "ds"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lerobot_ros.cli.main",
            "convert",
            str(bags),
            "--contract",
            str(contract_file(tmp_path)),
            "--dataset.root",
            str(out),
        ],
        env=ros_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Ctrl-C as a terminal delivers it, even when this suite runs as a background job (which ignores SIGINT,
        # and an ignored signal stays ignored across exec: Python would then not turn it into KeyboardInterrupt)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(lambda: proc.stdout.read(1), "")), daemon=True)
    reader.start()
    write_end = None
    try:
        deadline = time.monotonic() + 300
        while write_end is None:
            assert proc.poll() is None, "".join(seen)  # it cannot end on its own: the FIFO blocks it
            assert time.monotonic() < deadline, "the converter never reached the third bag:\n" + "".join(seen)
            try:
                write_end = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO until the converter opens it
            except OSError as exc:
                assert exc.errno == errno.ENXIO, exc
                time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        os.close(write_end)
        write_end = None
        proc.wait(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
        if write_end is not None:
            os.close(write_end)
    reader.join(timeout=10)
    output = "".join(seen)
    assert proc.returncode == 130, output
    ds = load(out)
    assert ds.num_episodes == 2 and [ds[int(e["dataset_from_index"])]["task"] for e in ds.meta.episodes] == [
        "task 0",
        "task 1",
    ]
    assert not (tmp_path / ".ds.partial").exists()
    assert "interrupted" in output


def test_bags_that_rosbags_alone_misread_convert_whole(tmp_path, capsys):
    """A bag whose metadata.yaml QoS text was edited, and a 12-file split without metadata.yaml (a plain
    sort reads _10, _11 before _2), convert with every state sample in place."""
    import shutil

    edited = write_so101_bag(tmp_path / "edited", 2.0, task="edited qos")
    meta = edited / "metadata.yaml"
    doc = yaml.safe_load(meta.read_text())
    for entry in doc["rosbag2_bagfile_information"]["topics_with_message_count"]:
        entry["topic_metadata"]["offered_qos_profiles"] = (
            "- history: 1\n  depth: 99\n  reliability: 2\n  durability: 2\n"
        )
    meta.write_text(yaml.safe_dump(doc))
    msgs = list(so101_messages(2.0, task="split"))
    split = tmp_path / "split"
    split.mkdir()
    bounds = np.linspace(0, len(msgs), 13).astype(int)
    for k in range(12):
        part = write_bag(tmp_path / f"part{k}", msgs[bounds[k] : bounds[k + 1]])
        shutil.move(part / f"part{k}.mcap", split / f"split_{k}.mcap")
    out = tmp_path / "ds"
    assert run_cli(edited, split, "--contract", contract_file(tmp_path), "--dataset.root", out) == 0
    text = capsys.readouterr().out
    assert "out-of-order" not in text and "truncated" not in text
    assert "no metadata.yaml: read its 12 storage files in numeric order" in text
    ds = load(out)
    assert [int(e["length"]) for e in ds.meta.episodes] == [61, 61]
    columns = ds.hf_dataset.with_format("numpy")
    expected = np.rad2deg(joint_positions(np.arange(61) / 30))
    for e in range(2):
        state = np.stack(columns["observation.state"][e * 61 : (e + 1) * 61])
        np.testing.assert_allclose(state, expected, atol=0.05)


def test_resize_covers_a_mid_bag_size_change(tmp_path):
    from lerobot_ros.bag import BagError, BagReader
    from lerobot_ros.bag.episodes import iter_frames, plan_bag
    from lerobot_ros.contract import load_contract

    msgs = []
    for topic, msgtype, t, msg in so101_messages(1.0, compressed=False, task="t"):
        if topic == "/front/image_raw" and t > T0 + 500_000_000:  # the camera switches to half size
            msg = numpy_to_image(np.zeros((H // 2, W // 2, 3), np.uint8), "rgb8", stamp_ns=t - 1_000_000)
        msgs.append((topic, msgtype, t, msg))
    bag = write_bag(tmp_path / "resized", msgs)
    plain = load_contract(contract_file(tmp_path, "sensor_msgs/msg/Image", "/front/image_raw"))
    with BagReader(bag) as reader, pytest.raises(BagError) as info:
        plan_bag(reader, plain)
    assert (
        f"change size mid-bag (64x48 -> 32x24); add `{{resize: [{H}, {W}]}}` to observation.images.front's transforms"
        in str(info.value)
    )
    path = contract_file(tmp_path, "sensor_msgs/msg/Image", "/front/image_raw")
    data = yaml.safe_load(path.read_text())
    data["features"]["observation.images.front"]["transforms"] = [{"resize": [H, W]}]
    path.write_text(yaml.safe_dump(data))
    with BagReader(bag) as reader:
        contract = load_contract(path)
        plan = plan_bag(reader, contract)
        frames = [f["observation.images.front"] for _e, _k, f in iter_frames(reader, contract, plan)]
    assert len(frames) == 31 and all(f.shape == (H, W, 3) for f in frames)
    np.testing.assert_array_equal(frames[5], camera_frame(5, H, W))  # raw rgb8 at full size: exact
    assert frames[-1].max() == 0  # the half-size black frames, resized up


def test_workers_decode_and_one_writer_gives_the_same_dataset(tmp_path, capsys, monkeypatch):
    """--num_workers 2: bags decode in two processes, this one writes. A bag failing in planning (corrupt) and
    one failing part-way through its frames (a compressed camera changing size) leave the other bags'
    episodes in order, the same as one worker."""
    bags = tmp_path / "bags"
    good = [write_so101_bag(bags / f"good_{k}", 0.5, task=f"task {k}", t0=T0 + k * 10**12) for k in range(3)]
    resized = []
    for topic, msgtype, t, msg in so101_messages(1.0, task="t"):
        if topic == "/front/image_raw/compressed" and t > T0 + 600_000_000:
            from lerobot_ros.codecs import numpy_to_compressed

            msg = numpy_to_compressed(np.zeros((H // 2, W // 2, 3), np.uint8), stamp_ns=t - 1_000_000)
        resized.append((topic, msgtype, t, msg))
    late_fail = write_bag(bags / "late_fail", resized)
    (bags / "corrupt.mcap").write_bytes(b"\x89MCAP0\r\n" + bytes(200))
    order = [good[0], late_fail, bags / "corrupt.mcap", good[1], good[2]]
    contract = contract_file(tmp_path)
    results = {}
    from lerobot_ros.dataset import parallel

    monkeypatch.setattr(parallel, "usable_cores", lambda: 2)
    assert run_cli(*order, "--contract", contract, "--dataset.root", tmp_path / "ds_2cores", "--num_workers", 2) == 1
    assert (
        "num_workers 2: 0 decode process(es) on 2 core(s); the video encoder keeps every core busy"
        in capsys.readouterr().err
    )
    started = many_cores(monkeypatch)
    for workers in (1, 2):
        out = tmp_path / f"ds_w{workers}"
        assert run_cli(*order, "--contract", contract, "--dataset.root", out, "--num_workers", workers) == 1
        text = capsys.readouterr().out
        errors = sorted(line.split(": ", 2)[1] for line in text.splitlines() if line.startswith("error: "))
        ds = load(out)
        state = np.stack(ds.hf_dataset.with_format("numpy")["observation.state"])
        results[workers] = (errors, [ds[int(e["dataset_from_index"])]["task"] for e in ds.meta.episodes], state)
        report = json.loads((out / "meta" / "lerobot_ros_qa.json").read_text())
        assert [b["status"] for b in report["bags"]] == ["ok", "failed", "failed", "ok", "ok"]
        assert report["bags"][1]["error"].endswith(
            "change size mid-bag (64x48 -> 32x24); add `{resize: [48, 64]}` to observation.images.front's transforms to write them all at 64x48"
        )
    assert started == [2]  # --num_workers 1 starts none
    assert results[1][0] == results[2][0] == sorted([str(late_fail), str(bags / "corrupt.mcap")])
    assert results[1][1] == results[2][1] == ["task 0", "task 1", "task 2"]
    np.testing.assert_array_equal(results[1][2], results[2][2])
