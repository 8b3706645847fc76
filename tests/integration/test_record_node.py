"""episode_recorder / episode_keyboard over real DDS: real publishers in another process, real bags.

The publisher is bench/recorder.py's `publish` mode (joint states 100 Hz, 480x640 rgb8 cameras 30 Hz,
commands 30 Hz, reliable, in timed phases, printing what it published).
"""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from rosbags.rosbag2 import Reader, ReaderError
from rosbags.typesys import Stores, get_typestore

from lerobot_ros.bag import open_bag
from lerobot_ros.configs import names
from lerobot_ros.record.config import RecorderConfig
from lerobot_ros.record.repair import repair_bag
from lerobot_ros.ros.runtime import MessageCollector, call_service, wait_until
from lerobot_ros.testing.datasets import recorder_count
from lerobot_ros.testing.param_probe import ParamProbe, assert_all_described
from lerobot_ros_msgs.msg import EpisodeStatus
from lerobot_ros_msgs.srv import StartEpisode, StopEpisode

pytestmark = [pytest.mark.slow, pytest.mark.ros]
BENCH = Path(__file__).resolve().parents[2] / "bench" / "recorder.py"
TS = get_typestore(Stores.ROS2_KILTED)


class Proc:
    """A child process with its stderr in a file (so the test can wait for log lines)."""

    def __init__(self, cmd, env, log: Path, stdin=None, stdout=None):
        self.log = log
        self._fh = open(log, "w")
        self.p = subprocess.Popen(cmd, env=env, stdin=stdin, stdout=stdout or self._fh, stderr=self._fh, text=True)

    def text(self) -> str:
        return self.log.read_text()

    def wait_log(self, needle: str, timeout: float = 30.0, count: int = 1) -> None:
        wait_until(lambda: self.text().count(needle) >= count or self.p.poll() is not None, timeout, what=needle)
        assert self.text().count(needle) >= count, f"{needle!r} not in log:\n{self.text()[-3000:]}"

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(timeout=20)
        self._fh.close()


def recorder(env, tmp_path, ns: str, *params: str, name: str = "recorder") -> Proc:
    cmd = [sys.executable, "-m", "lerobot_ros.nodes.episode_recorder_node", "--ros-args", "-r", f"__ns:={ns}"]
    for p in params:
        cmd += ["-p", p]
    return Proc(cmd, env, tmp_path / f"{name}.log")


def publisher(env, tmp_path, ns: str, *args: str) -> Proc:
    cmd = [sys.executable, str(BENCH), "publish", "--ns", ns, *args]
    return Proc(cmd, env, tmp_path / "publisher.log", stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def event(proc: Proc, name: str, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.p.stdout.readline()
        if not line:
            raise AssertionError(f"publisher ended before {name!r}:\n{proc.text()[-2000:]}")
        ev = json.loads(line)
        assert ev["event"] != "error", ev
        if ev["event"] == name:
            return ev
    raise TimeoutError(name)


def bag_counts(path: Path) -> dict[str, int]:
    """Messages per topic, summed over the topic's connections (a topic may have more than one)."""
    counts: dict[str, int] = {}
    with Reader(path) as reader:
        for c in reader.connections:
            counts[c.topic] = counts.get(c.topic, 0) + c.msgcount
    return counts


def metadata(path: Path) -> dict:
    return yaml.safe_load((path / "metadata.yaml").read_text())["rosbag2_bagfile_information"]


def joint_prefix_ok(path: Path, topic: str) -> int:
    """Joint states in the bag are exactly the publisher's first n messages, in order; returns n."""
    with Reader(path) as reader:
        conns = [c for c in reader.connections if c.topic == topic]
        positions = [
            TS.deserialize_cdr(raw, "sensor_msgs/msg/JointState").position for _, _, raw in reader.messages(conns)
        ]
    for k, pos in enumerate(positions):
        np.testing.assert_allclose(pos, np.sin(0.01 * k + np.arange(6)))
    return len(positions)


# ---------------------------------------------------------------------------------------------------------
def test_counts_in_the_bag_equal_what_was_published(ros, ros_env, tmp_path):
    ns = "/rec1"
    out = tmp_path / "out"
    (out / "episode_000000").mkdir(parents=True)  # an earlier episode: must not be touched
    (out / "episode_000000" / "note").write_text("old")
    topics = [f"{ns}/joint_states", f"{ns}/cam0/image_raw", f"{ns}/cam1/image_raw", f"{ns}/commands"]
    rec = recorder(
        ros_env,
        tmp_path,
        ns,
        "topics:=[" + ",".join(topics) + "]",
        f"output_dir:={out}",
        "task:=pick the cube",
        "progress_period_s:=0.5",
    )
    pub = publisher(ros_env, tmp_path, ns, "--cams", "2", "--command-hz", "30", "--phase-s", "2", "--wait-go")
    node = ros.create_node("rec_test_client")
    status = MessageCollector(node, EpisodeStatus, f"{ns}/episode_status", 10)
    diagnostics = MessageCollector(node, DiagnosticArray, "/diagnostics", 10)
    try:
        assert event(pub, "ready")["topics"] == topics  # every stream has matched the recorder
        response = call_service(node, StartEpisode, f"{ns}/start_episode", StartEpisode.Request())
        assert response.success and response.episode_index == 1, response.message
        pub.p.stdin.write("go\n")
        pub.p.stdin.flush()
        published = event(pub, "done")["counts"]
        assert published[f"{ns}/joint_states"] >= 150 and published[f"{ns}/cam0/image_raw"] >= 45

        wait_until(
            lambda: all(recorder_count(diagnostics, t) == n for t, n in published.items()),
            30,
            what="all published messages counted by the recorder",
        )
        response = call_service(node, StopEpisode, f"{ns}/stop_episode", StopEpisode.Request(outcome="success"))
        assert response.success, response.message
        bag = Path(response.bag_path)
        assert bag == out / "episode_000001"
        assert bag_counts(bag) == published  # nothing lost, per topic
        meta = metadata(bag)
        assert meta["message_count"] == sum(published.values()) and meta["version"] == 9
        custom = meta["custom_data"]
        assert (custom["task"], custom["outcome"], custom["episode_index"]) == ("pick the cube", "success", "1")
        qa = json.loads(custom["qa"])
        assert qa["streams"][f"{ns}/joint_states"]["samples"] == published[f"{ns}/joint_states"]
        offered = {
            t["topic_metadata"]["name"]: t["topic_metadata"]["offered_qos_profiles"]
            for t in meta["topics_with_message_count"]
        }
        assert offered[f"{ns}/cam0/image_raw"][0]["reliability"] == "reliable"
        assert joint_prefix_ok(bag, f"{ns}/joint_states") == published[f"{ns}/joint_states"]
        with Reader(bag) as reader:  # a camera frame comes back intact
            conn = next(c for c in reader.connections if c.topic == f"{ns}/cam1/image_raw")
            img = TS.deserialize_cdr(next(reader.messages([conn]))[2], "sensor_msgs/msg/Image")
            assert (img.height, img.width, img.encoding, img.data.size) == (480, 640, "rgb8", 480 * 640 * 3)
        assert any(s.episode_index == 1 and s.task == "pick the cube" and not s.done for s in status.messages)

        # discard: the episode's directory disappears and its index is recorded again
        response = call_service(node, StartEpisode, f"{ns}/start_episode", StartEpisode.Request(task="other"))
        assert response.success and response.episode_index == 2
        assert (out / "episode_000002").is_dir()
        response = call_service(node, StopEpisode, f"{ns}/stop_episode", StopEpisode.Request(outcome="discard"))
        assert response.success and response.bag_path == ""
        assert not (out / "episode_000002").exists()
        response = call_service(node, StopEpisode, f"{ns}/stop_episode", StopEpisode.Request(outcome="success"))
        assert not response.success and "no episode is recording" in response.message
        response = call_service(node, StopEpisode, f"{ns}/stop_episode", StopEpisode.Request(outcome="maybe"))
        assert not response.success
        assert sorted(p.name for p in out.iterdir()) == ["episode_000000", "episode_000001"]
        assert (out / "episode_000000" / "note").read_text() == "old"
        rec.p.send_signal(signal.SIGINT)
        assert rec.p.wait(timeout=20) == 0
        assert "Traceback" not in rec.text()
    finally:
        pub.stop()
        rec.stop()


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM"])
def test_what_survives_a_killed_recorder(ros, ros_env, tmp_path, sig):
    ns = f"/rec_{sig.lower()}"
    out = tmp_path / "out"
    topics = [f"{ns}/joint_states", f"{ns}/cam0/image_raw", f"{ns}/cam1/image_raw"]
    rec = recorder(
        ros_env,
        tmp_path,
        ns,
        "topics:=[" + ",".join(topics) + "]",
        f"output_dir:={out}",
        "flush_interval_s:=0.2",
        "task:=survive",
        "progress_period_s:=0.2",
    )
    # phase 0 (1.5 s), a 1.5 s pause (many flush intervals), then phase 1 during which the signal arrives
    pub = publisher(
        ros_env, tmp_path, ns, "--cams", "2", "--phase-s", "1.5", "--phase-s", "30", "--pause-s", "1.5", "--wait-go"
    )
    node = ros.create_node("kill_test_client")
    diagnostics = MessageCollector(node, DiagnosticArray, "/diagnostics", 10)
    try:
        event(pub, "ready")
        assert call_service(node, StartEpisode, f"{ns}/start_episode", StartEpisode.Request()).success
        pub.p.stdin.write("go\n")
        pub.p.stdin.flush()
        before = event(pub, "phase")["counts"]
        phase_end = time.monotonic()
        # everything of phase 0 is on disk once the recorder counted it and a few flush intervals passed
        wait_until(
            lambda: all((recorder_count(diagnostics, t) or 0) >= before[t] for t in topics),
            30,
            what="phase 0 received by the recorder",
        )
        time.sleep(max(0.6, 2.0 - (time.monotonic() - phase_end)))  # into phase 1, >= 3 flush intervals after
        rec.p.send_signal(getattr(signal, sig))
        code = rec.p.wait(timeout=30)
        bag = out / "episode_000000"
        if sig == "SIGKILL":
            assert code == -signal.SIGKILL
            assert metadata(bag)["custom_data"]["outcome"] == "recording"  # the provisional metadata.yaml
            with pytest.raises(
                ReaderError, match="File end magic is invalid"
            ):  # rosbags alone rejects the unfinished file
                Reader(bag / "episode_000000.mcap").open()
            killed = open_bag(bag)  # the converter's reader takes the killed bag as it is
            assert killed.truncated and killed.custom_data["task"] == "survive"
            readable_by_converter = {t: info.count for t, info in killed.topics.items()}
            result = repair_bag(bag, tmp_path / "repaired")
            bag = tmp_path / "repaired"
            assert result.messages == sum(bag_counts(bag).values()) and not result.complete
            assert bag_counts(bag) == readable_by_converter
        else:
            assert code == 0, rec.text()[-2000:]
            assert "episode closed on shutdown" in rec.text()
            assert metadata(bag)["custom_data"]["outcome"] == "interrupted"
        counts = bag_counts(bag)
        meta = metadata(bag)
        assert meta["custom_data"]["task"] == "survive" and meta["custom_data"]["episode_index"] == "0"
        # all of phase 0 survived, plus part of phase 1 (at most 30 s of it)
        for topic in topics:
            assert before[topic] <= counts[topic] < before[topic] + 3000, (topic, before, counts)
        assert counts[f"{ns}/joint_states"] >= 140 and counts[f"{ns}/cam0/image_raw"] >= 40
        assert joint_prefix_ok(bag, f"{ns}/joint_states") == counts[f"{ns}/joint_states"]  # no holes
        assert meta["message_count"] == sum(counts.values())
    finally:
        pub.stop()
        rec.stop()


def test_keyboard_next_rerecord_stop_through_a_pty(ros_env, tmp_path):
    ns = "/kb"
    out = tmp_path / "out"
    rec = recorder(
        ros_env,
        tmp_path,
        ns,
        "all_topics:=true",
        f"output_dir:={out}",  # like `ros2 bag record -a`
        "dataset.episode_time_s:=0",
        "dataset.num_episodes:=0",
    )  # integers where doubles are declared: accepted
    pub = publisher(ros_env, tmp_path, ns, "--cams", "0", "--phase-s", "60")
    master, slave = pty.openpty()
    keyboard = Proc(
        [sys.executable, "-m", "lerobot_ros.nodes.episode_keyboard_node", "--ros-args", "-r", f"__ns:={ns}"],
        ros_env,
        tmp_path / "keyboard.log",
        stdin=slave,
    )
    os.close(slave)
    try:
        event(pub, "ready")
        keyboard.wait_log("keys:")
        wait_until(lambda: f"subscribed {ns}/joint_states" in rec.text(), 30, what="recorder subscription")
        keyboard.wait_log("recorder listening on /kb/episode_control")  # matched before the first key
        os.write(master, b"\x1b[C")  # right arrow: start (manual mode)
        rec.wait_log("episode 0 (1) recording")
        os.write(master, b"r")  # re-record: discard and start again with the same index
        rec.wait_log("episode 0 discarded")
        rec.wait_log("episode 0 (1) recording", count=2)
        time.sleep(0.5)
        os.write(master, b"n")  # keep it
        rec.wait_log("episode 0 saved (success)")
        os.write(master, b"\x1b[C")
        rec.wait_log("episode 1 (2) recording")
        time.sleep(0.5)  # as for episode 0: a "q" right after the start kept an episode with no joint state in it
        os.write(master, b"q")  # stop: keep episode 1 and end the session
        assert keyboard.p.wait(timeout=20) == 0
        assert rec.p.wait(timeout=20) == 0, rec.text()[-2000:]
        assert "-> next" in keyboard.text() and "-> rerecord" in keyboard.text() and "-> stop" in keyboard.text()
        assert sorted(p.name for p in out.iterdir()) == ["episode_000000", "episode_000001"]
        for i in (0, 1):
            meta = metadata(out / f"episode_00000{i}")
            assert (
                meta["custom_data"]["outcome"] == "success"
                and bag_counts(out / f"episode_00000{i}")[f"{ns}/joint_states"] > 0
            )
            recorded = {t["topic_metadata"]["name"] for t in meta["topics_with_message_count"]}
            assert not recorded & {"/rosout", "/parameter_events", "/diagnostics", f"{ns}/episode_status"}
    finally:
        os.close(master)
        keyboard.stop()
        pub.stop()
        rec.stop()


def test_keyboard_says_when_no_recorder_hears_a_key(ros_env, tmp_path):
    master, slave = pty.openpty()
    keyboard = Proc(
        [
            sys.executable,
            "-m",
            "lerobot_ros.nodes.episode_keyboard_node",
            "--ros-args",
            "-r",
            "__ns:=/kb_alone",
            "-p",
            "match_timeout_s:=0.3",
        ],
        ros_env,
        tmp_path / "keyboard.log",
        stdin=slave,
    )
    os.close(slave)
    try:
        keyboard.wait_log("keys:")
        os.write(master, b"n")
        keyboard.wait_log("-> next: no episode_recorder is listening on /kb_alone/episode_control")
        assert "recorder listening" not in keyboard.text()
        os.write(master, b"q")
        assert keyboard.p.wait(timeout=20) == 0
    finally:
        os.close(master)
        keyboard.stop()


def test_record_cli_automatic_mode_with_a_contract(ros_env, tmp_path):
    ns = "/auto"
    contract = tmp_path / "arm.yaml"
    contract.write_text(f"""
robot_type: test_arm
fps: 30
task: "wave hello"
features:
  action:
    topic: {ns}/commands
    type: std_msgs/msg/Float64MultiArray
    qos: reliable
    slice: [0, 6]
    names: [a1, a2, a3, a4, a5, a6]
    timeline: receive
  observation.state:
    topic: {ns}/joint_states
    type: sensor_msgs/msg/JointState
    qos: sensor
    joints: [shoulder_pan, shoulder_lift, elbow_flex, wrist_flex, wrist_roll, gripper]
    timeline: receive   # one time base for both streams, however late a starved publisher's messages are
""")
    out = tmp_path / "out"
    pub = publisher(ros_env, tmp_path, ns, "--cams", "0", "--command-hz", "30", "--phase-s", "60")
    dataset = tmp_path / "dataset"
    cli = Proc(
        [
            sys.executable,
            "-m",
            "lerobot_ros.cli.main",
            "record",
            "--contract",
            str(contract),
            "--output_dir",
            str(out),
            "--dataset.episode_time_s",
            "1.0",
            "--dataset.reset_time_s",
            "0.3",
            "--dataset.num_episodes",
            "2",
            "--dataset.root",
            str(dataset),
        ],
        ros_env,
        tmp_path / "cli.log",
    )
    try:
        assert cli.p.wait(timeout=400) == 0, cli.text()[-3000:]
        assert sorted(p.name for p in out.iterdir()) == ["episode_000000", "episode_000001"]
        for i in (0, 1):
            bag = out / f"episode_00000{i}"
            counts = bag_counts(bag)
            meta = metadata(bag)
            custom = meta["custom_data"]
            assert set(counts) == {f"{ns}/commands", f"{ns}/joint_states"}
            assert custom["task"] == "wave hello" and custom["episode_index"] == str(i)
            assert custom["outcome"] == "success" and "robot_type: test_arm" in custom["contract"]
            qa = json.loads(custom["qa"])
            assert qa["fps"] == 30 and qa["streams"][f"{ns}/joint_states"]["policy"] == "interpolate"
        assert "reset" in cli.text() and "2/2" in cli.text()
        # each kept episode was converted in the background; the parts were merged into one dataset, which
        # the worker reloaded with LeRobotDataset (the "dataset: ..." line reports that reload)
        import pyarrow.parquet as pq

        assert "converted episode_000000 in the background" in cli.text()
        info = json.loads((dataset / "meta" / "info.json").read_text())
        assert info["total_episodes"] == 2 and info["robot_type"] == "test_arm" and info["fps"] == 30
        assert f"dataset: {dataset} (2 episodes, {info['total_frames']} frames)" in cli.text()
        table = pq.read_table(next((dataset / "data").rglob("*.parquet")))
        assert table.num_rows == info["total_frames"] > 0
        assert sorted(set(table.column("episode_index").to_pylist())) == [0, 1]
        assert len(table.column("action")[0]) == 6 and len(table.column("observation.state")[0]) == 6
        assert pq.read_table(dataset / "meta" / "tasks.parquet").column("task").to_pylist() == ["wave hello"]
        assert not (tmp_path / ".dataset.parts").exists()
    finally:
        pub.stop()
        cli.stop()


def test_bad_settings_fail_in_one_line(ros_env, tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lerobot_ros.nodes.episode_recorder_node",
            "--ros-args",
            "-p",
            f"contract:={tmp_path / 'missing.yaml'}",
        ],
        env=ros_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "missing.yaml does not exist" in proc.stderr
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lerobot_ros.nodes.episode_recorder_node",
            "--ros-args",
            "-p",
            "topics:=[/a]",
            "-p",
            "dataset.episode_time_s:=soon",
        ],
        env=ros_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "parameter 'dataset.episode_time_s' must be a number, got 'soon'" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "lerobot_ros.cli.main", "record", "--output_dir", str(tmp_path)],
        env=ros_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "give --contract, --topics or --all_topics" in proc.stderr


def test_parameters_described_refused_and_applied_from_outside(ros, ros_env, tmp_path):
    """describe_parameters lists a description for every parameter; a read-only one is refused with the
    reason; reconfigurable ones act (the outcome default and the task of the next stop / episode)."""
    ns = "/recparams"
    out = tmp_path / "out"
    rec = recorder(ros_env, tmp_path, ns, f"topics:=[{ns}/nothing]", f"output_dir:={out}", "dataset.num_episodes:=3")
    try:
        probe = ParamProbe(ros, f"{ns}/episode_recorder", timeout=120)  # the recorder is another process
        described = assert_all_described(probe)
        assert set(names(RecorderConfig)) <= set(described)
        assert described["output_dir"].read_only and not described["default_outcome"].read_only
        assert "unit: s" in described["drain_s"].additional_constraints
        refused = probe.set("output_dir", str(tmp_path / "elsewhere"))
        assert not refused.successful and "read-only" in refused.reason
        switched = probe.set("dataset.episode_time_s", 5)  # an integer for a double; but manual -> automatic is refused
        assert not switched.successful and "cannot switch between manual (0) and automatic" in switched.reason
        for name, value in (("default_outcome", "failure"), ("task", "stack"), ("progress_period_s", 2)):
            result = probe.set(name, value)
            assert result.successful, (name, result.reason)
        assert probe.get("progress_period_s") == 2.0
        node = ros.create_node("rec_params_client")
        assert call_service(node, StartEpisode, f"{ns}/start_episode", StartEpisode.Request()).success
        response = call_service(
            node, StopEpisode, f"{ns}/stop_episode", StopEpisode.Request()
        )  # no outcome: the default
        assert response.success, response.message
        custom = metadata(Path(response.bag_path))["custom_data"]
        assert (custom["outcome"], custom["task"]) == ("failure", "stack")
        rec.p.send_signal(signal.SIGINT)
        assert rec.p.wait(timeout=20) == 0 and "Traceback" not in rec.text()
    finally:
        rec.stop()


def test_a_clock_that_jumps_back_ends_the_episode_in_one_line_and_loses_nothing(ros, ros_env, tmp_path):
    """use_sim_time and a simulator restarted mid-episode (its /clock starts over): the episode keeps everything
    recorded before the jump, in order, and says why it ended; the next episode records on the new clock."""
    import threading

    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState

    from lerobot_ros.codecs import ns_to_time, numpy_to_joint_state
    from lerobot_ros.ros.qos import RELIABLE_QOS

    ns = "/recjump"
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "lerobot_ros.nodes.episode_recorder_node", "--ros-args", "-r", f"__ns:={ns}"]
    cmd += ["-r", f"/clock:={ns}/clock"]  # its own clock topic: nothing else in the domain follows this one
    for param in (f"topics:=[{ns}/joint_states]", f"output_dir:={out}", "use_sim_time:=true"):
        cmd += ["-p", param]
    rec = Proc(cmd, ros_env, tmp_path / "recorder_jump.log")
    node = ros.create_node("jump_clock")
    clock_pub = node.create_publisher(Clock, f"{ns}/clock", RELIABLE_QOS)
    states = node.create_publisher(JointState, f"{ns}/joint_states", RELIABLE_QOS)
    diagnostics = MessageCollector(node, DiagnosticArray, "/diagnostics", 10)
    sim = {"t_ns": 100 * 10**9}
    stop = threading.Event()

    def run_sim() -> None:  # a simulator at 50 Hz: /clock, then a joint state stamped with it
        while not stop.wait(0.02):
            if "restart_ns" in sim:  # restarted here, between two steps: the last old stamp is known exactly
                sim["last_old_ns"], sim["t_ns"] = sim["t_ns"], sim.pop("restart_ns")
            sim["t_ns"] += 20_000_000
            clock_pub.publish(Clock(clock=ns_to_time(sim["t_ns"])))
            states.publish(numpy_to_joint_state(["j"], [sim["t_ns"] / 1e9], stamp_ns=sim["t_ns"]))

    thread = threading.Thread(target=run_sim, daemon=True)
    thread.start()
    try:
        wait_until(lambda: states.get_subscription_count() > 0, 60, what="the recorder subscribed")
        started = call_service(node, StartEpisode, f"{ns}/start_episode", StartEpisode.Request(task="jump"))
        assert started.success, started.message
        wait_until(lambda: (recorder_count(diagnostics, f"{ns}/joint_states") or 0) >= 30, 30, what="30 recorded")
        sim["restart_ns"] = 5 * 10**9  # the simulator restarts
        wait_until(lambda: "last_old_ns" in sim, 10, what="the simulator restarted")
        before_jump = sim["last_old_ns"]
        rec.wait_log("ROS time jumped back", timeout=30)
        line = next(ln for ln in rec.text().splitlines() if "ROS time jumped back" in ln)
        assert line.endswith("episode 0 ended at the jump with what it had; start the next one when ready")
        bag = out / "episode_000000"

        def closed() -> bool:  # the open episode's metadata is provisional (outcome "recording")
            from lerobot_ros.record.episode_bag_writer import UNFINISHED

            try:
                return metadata(bag)["custom_data"].get("outcome", UNFINISHED) != UNFINISHED
            except (OSError, KeyError, TypeError, yaml.YAMLError):
                return False

        wait_until(closed, 30, what="the episode closed")
        custom = metadata(bag)["custom_data"]
        jump = re.fullmatch(r"ROS time jumped back ([0-9.]+) s \(a simulator restarted\?\)", custom["ended"])
        assert jump and custom["outcome"] == "success", custom
        # from the last old stamp (or /clock) to the first new one, 5.02 s: the jump is known to the 0.1 s printed
        assert abs(float(jump.group(1)) - (before_jump - 5_020_000_000) / 1e9) <= 0.15, (custom, before_jump)
        with Reader(bag) as reader:
            times = [t for _, t, _ in reader.messages()]
        assert len(times) >= 30 and times == sorted(times) and max(times) <= before_jump + 100_000_000
        assert min(times) >= 100 * 10**9  # nothing from the new clock in the old episode

        started = call_service(node, StartEpisode, f"{ns}/start_episode", StartEpisode.Request(task="jump"))
        assert started.success and started.episode_index == 1, started.message
        restarted_at = sim["t_ns"]
        wait_until(lambda: sim["t_ns"] > restarted_at + 500_000_000, 30, what="half a second of the new clock")
        stopped = call_service(node, StopEpisode, f"{ns}/stop_episode", StopEpisode.Request(outcome="success"))
        assert stopped.success, stopped.message
        with Reader(Path(stopped.bag_path)) as reader:
            new_times = [t for _, t, _ in reader.messages()]
        assert new_times and 5 * 10**9 < min(new_times) < 100 * 10**9
    finally:
        stop.set()
        thread.join(5)
        rec.stop()
