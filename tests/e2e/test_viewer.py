"""lerobot-ros view: the layout, what a replayed bag records (read back from the .rrd with rerun's own reader),
the live hand-over that drops frames instead of blocking, the viewer node over real DDS, the CLI's bad input,
and viewer:=true in the launch files. The browser screenshots are tests/e2e/test_viewer_browser.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from lerobot_ros.contract import load_contract
from lerobot_ros.ros.runtime import wait_until
from lerobot_ros.testing.bags import write_sim_bag
from lerobot_ros.viewer import (
    LatestSlots,
    LiveFeed,
    RateGate,
    ViewerLayout,
    ViewerLog,
    entity_paths,
    load_robot,
    open_viewer,
    replay_bag,
)

REPO = Path(__file__).resolve().parents[2]
SIM_JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]


def rrd_chunks(path) -> dict[str, list]:
    from rerun.chunk import RrdReader

    out = defaultdict(list)
    for chunk in RrdReader(str(path)).stream().to_chunks():
        out[str(chunk.entity_path)].append(chunk)
    return out


def rows(chunks, entity: str) -> int:
    return sum(c.num_rows for c in chunks.get(entity, []) if not c.is_static)


def column(chunks, entity: str, name: str) -> list:
    values = []
    for c in chunks.get(entity, []):
        if c.is_static:
            continue
        batch = c.to_record_batch()
        if name in batch.schema.names:
            values += batch.column(name).to_pylist()
    return values


# -- layout --------------------------------------------------------------------------------------------
def test_layout_pairs_state_and_action_per_joint_by_name():
    layout = ViewerLayout.from_contract(load_contract("so101_sim"), robot_3d=True)
    assert layout.cameras == ("observation.images.front",)
    assert layout.camera_path("observation.images.front") == "cameras/front"
    plots = layout.joint_plots
    assert [p.label for p in plots] == SIM_JOINTS
    assert all(p.state_index == p.action_index == i for i, p in enumerate(plots))
    assert "robot/chunk/path" in entity_paths(layout)
    layout.blueprint(live=True)  # builds


def test_layout_pairs_by_position_when_names_differ_and_reads_dataset_features():
    layout = ViewerLayout.from_contract(load_contract("metaworld"))
    assert [p.label for p in layout.joint_plots] == [
        "hand_x | delta_x",
        "hand_y | delta_y",
        "hand_z | delta_z",
        "gripper_distance | gripper",
    ]
    assert layout.camera_path("observation.image") == "cameras/image"
    assert not layout.robot_3d and "robot/chunk/path" not in entity_paths(layout)
    old_style = {
        "observation.state": {"dtype": "float32", "shape": [2], "names": {"motors": ["a", "b"]}},
        "action": {"dtype": "float32", "shape": [3], "names": None},
        "observation.images.top": {"dtype": "video", "shape": [8, 8, 3]},
    }
    layout = ViewerLayout.from_features(old_style)
    assert layout.cameras == ("observation.images.top",)
    assert [(p.label, p.state_index, p.action_index) for p in layout.joint_plots] == [
        ("a | action_0", 0, 0),
        ("b | action_1", 1, 1),
        ("action_2", None, 2),
    ]


# -- replay --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def so101_robot():
    return load_robot("", "so101_follower")


def test_bag_replay_records_every_view_with_the_bag_values(tmp_path, so101_robot):
    import rerun as rr

    from lerobot_ros.bag import BagReader
    from lerobot_ros.testing.bags import joint_positions
    from lerobot_ros.viewer.replay import bag_contract

    bag = write_sim_bag(tmp_path / "episode")
    with BagReader(bag) as reader:
        contract = bag_contract(reader)  # the recorder's stored contract is enough
    layout = ViewerLayout.from_contract(contract, robot_3d=True)
    rec = rr.RecordingStream("test", recording_id="replay")
    out = tmp_path / "replay.rrd"
    assert open_viewer(rec, layout.blueprint(live=False), save=str(out)).mode == "file"
    log = ViewerLog(rec, layout)
    stats = replay_bag(bag, log, None, so101_robot)
    rec.flush()
    rec.disconnect()
    chunks = rrd_chunks(out)
    assert set(entity_paths(layout)) <= {p.lstrip("/") for p in chunks}
    assert stats.images == rows(chunks, "/cameras/front") == 31
    assert rows(chunks, "/joints/elbow_flex/state") == 101 and rows(chunks, "/joints/elbow_flex/action") == 31
    # state in LeRobot units (degrees), as the dataset would hold it
    state = np.asarray(column(chunks, "/joints/elbow_flex/state", "Scalars:scalars"), dtype=np.float64).reshape(-1)
    np.testing.assert_allclose(state[0], np.rad2deg(joint_positions(0.0)[2]), atol=1e-6)
    assert stats.chunks == 3 and rows(chunks, "/robot/chunk/path") == 3
    assert rows(chunks, "/diagnostics/sim_bridge\\:\\ so101") == 3
    # the chunk's path is the URDF tip of its points
    tip = so101_robot.chunk(SIM_JOINTS, joint_positions(np.arange(1, 11) / 30.0), np.arange(1, 11) / 30.0).tip
    points = column(chunks, "/robot/chunk/points", "Points3D:positions")[0]
    np.testing.assert_allclose(np.asarray(points), tip, atol=1e-5)
    assert log.episode.done and log.episode.success and log.task == "Pick up the cube"
    assert [lv for lv, _ in [log.diagnostics["sim_bridge: so101"]]] == [0]
    text = " ".join(str(v) for v in column(chunks, "/log", "TextLog:text"))
    assert "episode 0 done after 29 steps (success" in text and "sim_bridge: so101: WARN late" in text


# -- live hand-over ------------------------------------------------------------------------------------
def test_latest_slots_keep_the_newest_and_count_drops():
    slots = LatestSlots()
    for i in range(5):
        slots.put("front", i)
    slots.put("wrist", "w")
    assert slots.take() == {"front": 4, "wrist": "w"} and slots.take() == {}
    assert slots.offered["front"] == 5 and slots.dropped["front"] == 4
    gate = RateGate(10.0)
    allowed = [i for i in range(30) if gate.allow("front", i * 33_333_333)]
    assert allowed == list(range(0, 30, 3))  # 30 fps in, every third frame shown at 10 Hz
    assert RateGate(0).allow("x", 1) and RateGate(0).allow("x", 1)


def test_live_feed_shows_the_newest_frame_and_never_blocks_the_producer(tmp_path):
    import rerun as rr

    layout = ViewerLayout.from_contract(load_contract("so101_sim"))
    rec = rr.RecordingStream("test", recording_id="live")
    open_viewer(rec, layout.blueprint(), save=str(tmp_path / "live.rrd"))
    decoded = []

    def slow_decode(feature, payload):  # a viewer far slower than the camera
        time.sleep(0.2)
        decoded.append(payload)
        return np.full((24, 32, 3), payload % 256, np.uint8)

    feed = LiveFeed(ViewerLog(rec, layout), slow_decode, max_image_hz=0, flush_period_s=0.01)
    feed.start()
    try:
        t0 = time.monotonic()
        for i in range(60):  # 60 frames at ~100 Hz
            feed.offer_image("observation.images.front", i * 10_000_000, i)
            feed.offer_vector("state", i * 10_000_000, np.zeros(6))
            time.sleep(0.01)
        offer_time = time.monotonic() - t0
    finally:
        feed.stop()
    assert offer_time < 1.5  # the producer never waited for the 0.2 s decodes
    shown = feed.stats.images_shown["observation.images.front"]
    assert shown == len(decoded) and 2 <= shown < 20
    assert feed.stats.images_dropped["observation.images.front"] >= 60 - shown - 1
    assert decoded[-1] == 59 and feed.stats.vectors == 60  # the last frame is shown; no vector is lost


def test_a_frame_that_cannot_be_decoded_is_counted_and_the_feed_goes_on(tmp_path):
    """A corrupt jpeg raised in the viewer's worker thread and stopped every panel for good."""
    import rerun as rr

    from lerobot_ros.contract import ContractError

    layout = ViewerLayout.from_contract(load_contract("so101_sim"))
    rec = rr.RecordingStream("test", recording_id="bad_frame")
    open_viewer(rec, layout.blueprint(), save=str(tmp_path / "bad.rrd"))

    def decode(feature, payload):
        if payload == "corrupt":
            raise ContractError("observation.images.front: cannot decode the jpeg (broken data)")
        return np.zeros((24, 32, 3), np.uint8)

    feed = LiveFeed(ViewerLog(rec, layout), decode, max_image_hz=0, flush_period_s=0.01)

    def taken() -> int:  # frames the worker has drawn or refused
        stats = feed.stats
        return stats.images_shown.get("observation.images.front", 0) + stats.images_bad.get(
            "observation.images.front", 0
        )

    feed.start()
    try:
        for i, payload in enumerate(["ok", "corrupt", "ok", "ok"]):
            feed.offer_image("observation.images.front", i * 100_000_000, payload)
            feed.offer_vector("state", i * 100_000_000, np.zeros(6))
            # one at a time: the image slot keeps only the newest frame (an offer over an undrawn one drops it)
            wait_until(lambda: taken() == i + 1, 10, what=f"frame {i} taken by the worker")
    finally:
        feed.stop()
    assert feed.stats.images_bad == {"observation.images.front": 1}
    assert feed.stats.images_shown["observation.images.front"] == 3 and feed.stats.vectors == 4
    assert feed.error == (
        "a frame of observation.images.front not drawn: ContractError: observation.images.front: "
        "cannot decode the jpeg (broken data)"
    )


# -- the node over DDS ---------------------------------------------------------------------------------
def test_viewer_node_logs_the_contract_topics_it_receives(ros, tmp_path):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import Image, JointState
    from std_msgs.msg import Float64MultiArray, String
    from trajectory_msgs.msg import JointTrajectory

    from lerobot_ros.codecs import (
        chunk_to_joint_trajectory,
        numpy_to_float64_multi_array,
        numpy_to_image,
        numpy_to_joint_state,
    )
    from lerobot_ros.nodes.viewer_node import ViewerNode
    from lerobot_ros.ros.qos import LATCHED_QOS, RELIABLE_QOS, SENSOR_QOS
    from lerobot_ros.ros.runtime import wait_until

    out = tmp_path / "live.rrd"
    node = ros.add_node(
        ViewerNode(
            context=ros.context,
            parameter_overrides=[
                Parameter("contract", value="so101_sim"),
                Parameter("save", value=str(out)),
                Parameter("max_image_hz", value=0.0),
            ],
        )
    )
    pub = ros.create_node("robot")
    js = pub.create_publisher(JointState, "/sim/joint_states", SENSOR_QOS)
    cmd = pub.create_publisher(Float64MultiArray, "/sim/commands", RELIABLE_QOS)
    img = pub.create_publisher(Image, "/sim/front/image_raw", RELIABLE_QOS)
    task = pub.create_publisher(String, "/sim/task", LATCHED_QOS)
    chunk = pub.create_publisher(JointTrajectory, "/policy/predicted_chunk", RELIABLE_QOS)
    diag = pub.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
    task.publish(String(data="Pick up the cube"))
    wait_until(
        lambda: pub.count_subscribers("/sim/joint_states") and pub.count_subscribers("/sim/front/image_raw"), 20.0
    )
    for i in range(20):
        q = np.full(6, 0.01 * i)
        js.publish(numpy_to_joint_state(SIM_JOINTS, position=q))
        cmd.publish(numpy_to_float64_multi_array(q))
        img.publish(numpy_to_image(np.full((48, 64, 3), 10 * i, np.uint8), "rgb8"))
        time.sleep(0.03)
    chunk.publish(chunk_to_joint_trajectory(SIM_JOINTS, np.zeros((5, 6)), 30.0))
    diag.publish(
        DiagnosticArray(status=[DiagnosticStatus(level=bytes([2]), name="camera_node: front", message="no frame")])
    )
    wait_until(
        lambda: (
            node.feed.stats.chunks == 1
            and node.feed.stats.vectors >= 30
            and node.feed.stats.images_shown.get("observation.images.front", 0) >= 1
            and "camera_node: front" in node.feed.log.diagnostics
        ),
        20.0,
    )
    node.close()
    chunks = rrd_chunks(out)
    assert rows(chunks, "/joints/gripper/state") >= 10 and rows(chunks, "/joints/gripper/action") >= 10
    assert rows(chunks, "/cameras/front") >= 1 and rows(chunks, "/robot/chunk/path") == 1
    assert rows(chunks, "/robot/current") >= 1
    assert node.feed.log.task == "Pick up the cube"
    assert node.feed.log.diagnostics["camera_node: front"] == (2, "no frame")


# -- CLI and launch ------------------------------------------------------------------------------------
def run_cli(*args, timeout=180):
    return subprocess.run(
        [sys.executable, "-m", "lerobot_ros.cli.main", "view", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def test_cli_replay_writes_a_recording_and_bad_sources_get_one_line(tmp_path):
    from lerobot_ros.testing.bags import write_so101_bag

    bag = write_sim_bag(tmp_path / "episode", seconds=0.5, chunks=1)
    r = run_cli(str(bag), "--save", str(tmp_path / "out.rrd"))
    assert r.returncode == 0, r.stderr
    assert "16 frames" in r.stdout and (tmp_path / "out.rrd").stat().st_size > 0
    r = run_cli(str(tmp_path / "missing"))  # expected failures exit 1 (cli.main.EXIT_CODES)
    assert r.returncode == 1 and "does not exist" in r.stderr and "Traceback" not in r.stderr
    plain = write_so101_bag(tmp_path / "plain", seconds=0.2)  # no recorder metadata
    r = run_cli(str(plain), "--viewer", "none")
    assert r.returncode == 1 and "pass --contract" in r.stderr and "Traceback" not in r.stderr
    r = run_cli(str(plain), "--contract", "metaworld", "--viewer", "none")
    assert r.returncode == 1 and "none of the contract's topics" in r.stderr


@pytest.mark.parametrize(
    "name, contract, sim_time",
    [
        ("sim_so101", "so101_sim", True),
        ("sim_metaworld", "metaworld", True),
        ("so101_real", "so101", False),
        ("so101_virtual", "so101", False),
    ],
)
def test_viewer_argument_starts_the_viewer_node(tmp_path, monkeypatch, name, contract, sim_time):
    import tempfile

    import yaml

    from lerobot_ros.launch_runner import evaluate_file

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    path = str(REPO / "launch" / f"{name}.launch.yaml")
    without = evaluate_file(path, {}, environ=dict(os.environ))
    assert not any(p.label == "viewer" for p in without.processes)
    plan = evaluate_file(path, {"viewer": "true"}, environ=dict(os.environ))
    (viewer,) = [p for p in plan.processes if p.label == "viewer"]
    assert Path(viewer.cmd[0]).name == "viewer_node"
    params = yaml.safe_load(Path(viewer.cmd[viewer.cmd.index("--params-file") + 1]).read_text())
    (only,) = params.values()
    assert only["ros__parameters"]["contract"] == contract
    assert only["ros__parameters"]["use_sim_time"] is sim_time


@pytest.mark.slow
def test_dataset_episode_replays_on_its_frames_with_the_stored_contract(tmp_path):
    import yaml

    from lerobot_ros.bag import write_bag
    from lerobot_ros.cli.main import main
    from lerobot_ros.testing.bags import JOINTS, so101_messages

    contract = tmp_path / "contract.yaml"
    contract.write_text(
        yaml.safe_dump(
            {
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
                        "transforms": ["rad2deg"],
                    },
                    "observation.images.front": {
                        "topic": "/front/image_raw/compressed",
                        "type": "sensor_msgs/msg/CompressedImage",
                        "shape": [48, 64, 3],
                    },
                },
            },
            sort_keys=False,
        )
    )
    bag = write_bag(tmp_path / "bag", list(so101_messages(1.0, task="pick")))
    convert = [
        "convert",
        str(bag),
        "--contract",
        str(contract),
        "--dataset.root",
        str(tmp_path / "ds"),
        "--progress=false",
    ]
    assert main(convert) == 0
    out = tmp_path / "ds.rrd"
    r = run_cli(str(tmp_path / "ds"), "--episode_index", "0", "--save", str(out))
    assert r.returncode == 0, r.stderr
    chunks = rrd_chunks(out)
    frames = rows(chunks, "/joints/wrist_flex/state")
    assert 28 <= frames <= 31 and rows(chunks, "/cameras/front") == frames == rows(chunks, "/joints/wrist_flex/action")
    assert rows(chunks, "/robot/current") == frames  # the contract stored beside the dataset gives the 3D pose
    assert any("frame_index" in c.timeline_names for c in chunks["/joints/wrist_flex/state"])
    r = run_cli(str(tmp_path / "ds"), "--episode_index", "7", "--viewer", "none")
    assert r.returncode == 1 and "episode 7" in r.stderr and "Traceback" not in r.stderr
