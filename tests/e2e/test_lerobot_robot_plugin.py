"""LeRobot's own `lerobot-record` drives the SO-101 twin through the `ros_contract` robot plugin.

Real parts only: the twin (sim_bridge_node, realtime, `episode_limit:=marked`, two cameras) on DDS, an
emulated SO-101 leader on a pseudo-terminal read by LeRobot's own `so101_leader` teleoperator, and the
`lerobot-record` CLI as a process. The plugin is found by LeRobot's discovery (the installed
`lerobot_robot_ros_contract` distribution), not imported by the test.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from lerobot_ros.ros.runtime import wait_until

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
FPS = 30
EPISODE_S = 2


def _contract(path: Path, **topic_renames: str) -> Path:
    """so101_sim at 96x128 with a second (wrist) camera; `topic_renames` swaps topics to make bad contracts."""
    from lerobot_ros.contract import load_contract

    data = load_contract("so101_sim").raw
    data = json.loads(json.dumps(data))
    front = data["features"]["observation.images.front"]
    front["shape"], front["transforms"] = [96, 128, 3], [{"resize": [96, 128]}]
    wrist = dict(front, topic="/sim/wrist/image_raw")
    data["features"]["observation.images.wrist"] = wrist
    for feature in data["features"].values():
        feature["topic"] = topic_renames.get(feature["topic"], feature["topic"])
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _start(args: list[str], log: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        args, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True, text=True
    )


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    """The twin and a virtual leader, running for the whole module."""
    tmp = tmp_path_factory.mktemp("plugin")
    env = dict(os.environ, MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"), HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    env["HF_LEROBOT_HOME"] = str(tmp / "hf")  # LeRobot's Robot makes a calibration folder there
    twin = _start(
        [
            str(BIN / "sim_bridge_node"),
            "--ros-args",
            "-r",
            "__ns:=/sim",
            "-p",
            "env.type:=so101",
            "-p",
            "mode:=realtime",
            "-p",
            "cameras:=[front,wrist]",
            "-p",
            "env.observation_width:=128",
            "-p",
            "env.observation_height:=96",
            "-p",
            "antialias:=false",
            "-p",
            "episode_limit:=marked",
            "-p",
            "env.episode_length:=20",  # far shorter than the recording: the twin must go on past it
        ],
        tmp / "twin.log",
        env,
    )
    leader = _start(
        [str(BIN / "lerobot-ros"), "virtual-arm", "so101", "--role", "leader", "--output_dir", str(tmp / "virt")],
        tmp / "leader.log",
        env,
    )
    try:
        wait_until(lambda: "ready in" in (tmp / "twin.log").read_text(), 180, what="the twin's first episode")
        wait_until(lambda: (tmp / "virt" / "so101_leader").exists(), 60, what="the virtual leader's port")
        yield {"tmp": tmp, "env": env, "contract": _contract(tmp / "twin.yaml"), "twin": twin}
    finally:
        _stop(leader)
        _stop(twin)


def _record(rig, root: Path, contract: Path, episodes: int = 2, timeout: float = 300) -> subprocess.CompletedProcess:
    tmp = rig["tmp"]
    return subprocess.run(
        [
            str(BIN / "lerobot-record"),
            "--robot.type=ros_contract",
            f"--robot.contract={contract}",
            "--robot.id=twin",
            "--robot.connect_timeout_s=5",
            "--teleop.type=so101_leader",
            f"--teleop.port={tmp / 'virt' / 'so101_leader'}",
            "--teleop.id=virtual_leader",
            f"--teleop.calibration_dir={tmp / 'virt' / 'calibration'}",
            "--dataset.repo_id=local/twin",
            f"--dataset.root={root}",
            "--dataset.single_task=pick the cube",
            f"--dataset.num_episodes={episodes}",
            f"--dataset.episode_time_s={EPISODE_S}",
            "--dataset.reset_time_s=1",
            f"--dataset.fps={FPS}",
            "--dataset.push_to_hub=false",
            "--play_sounds=false",
            "--display_data=false",
        ],
        env=rig["env"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_lerobot_discovers_the_robot_plugin():
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from lerobot.utils.import_utils import register_third_party_plugins; register_third_party_plugins(); "
            "from lerobot.robots.config import RobotConfig; print(sorted(RobotConfig.get_known_choices()))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "'ros_contract'" in done.stdout


def test_lerobot_record_writes_two_episodes_with_two_cameras(rig):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    root = rig["tmp"] / "dataset"
    done = _record(rig, root, rig["contract"])
    assert done.returncode == 0, done.stderr[-4000:]
    ds = LeRobotDataset("local/twin", root=root)
    assert ds.meta.total_episodes == 2
    assert ds.meta.robot_type == "so101_follower"  # the contract's, as lerobot-ros convert writes it
    lengths = [int(ds.meta.episodes[i]["length"]) for i in range(2)]
    # lerobot-record's loop held 30 fps against the twin's topics (a frame short at most per episode)
    assert all(FPS * EPISODE_S - 1 <= n <= FPS * EPISODE_S for n in lengths), lengths
    joints = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
    names = [f"{j}.pos" for j in joints]
    assert ds.meta.features["observation.state"]["names"] == names
    assert ds.meta.features["action"]["names"] == names
    for cam in ("front", "wrist"):
        assert tuple(ds.meta.features[f"observation.images.{cam}"]["shape"]) == (96, 128, 3)
    frame = ds[len(ds) - 1]
    state = frame["observation.state"].numpy()
    assert np.all(np.isfinite(state))
    # units as the contract maps them: the gripper in 0..100 of its range, the arm joints in degrees
    assert 0.0 <= state[5] <= 100.0 and np.all(np.abs(state[:5]) < 180.0), state
    assert frame["observation.images.front"].shape == (3, 96, 128)
    # the twin went on past its 20-step episode limit (marked, not enforced): the last frames still move in time
    stamps = [float(ds[i]["timestamp"]) for i in range(len(ds) - 5, len(ds))]
    assert stamps == sorted(stamps) and stamps[-1] > 1.5


def test_a_topic_without_publisher_fails_in_one_line_and_leaves_no_dataset(rig):
    root = rig["tmp"] / "no_dataset"
    bad = _contract(rig["tmp"] / "bad.yaml", **{"/sim/wrist/image_raw": "/sim/nobody/image_raw"})
    started = time.monotonic()
    done = _record(rig, root, bad, episodes=1, timeout=180)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "/sim/nobody/image_raw has no publisher" in last, last
    assert "/sim/front" not in last  # only the topic that is wrong is named
    assert not root.exists(), "lerobot-record left a dataset folder behind"
    assert time.monotonic() - started < 120


def test_a_stale_topic_is_refused_by_name_with_its_age(rig):
    """In-process, beside this test session's own rclpy use: with the twin paused (SIGSTOP), get_observation()
    raises naming a stale topic and its age, and works again once the twin goes on."""
    from lerobot_ros.plugins.robot import RosContractRobot, RosContractRobotConfig
    from lerobot_ros.plugins.topics import TopicError

    os.environ["HF_LEROBOT_HOME"] = rig["env"]["HF_LEROBOT_HOME"]
    robot = RosContractRobot(
        RosContractRobotConfig(contract=str(rig["contract"]), id="probe", max_age_s=0.5, connect_timeout_s=20)
    )
    try:
        robot.connect()
        obs = robot.get_observation()
        assert set(obs) == {*robot.observation_features}
        assert obs["front"].shape == (96, 128, 3) and obs["front"].dtype == np.uint8
        sent = robot.send_action({k: np.float64(v) for k, v in obs.items() if k.endswith(".pos")})
        assert list(sent) == list(robot.action_features)
        with pytest.raises(ValueError, match="non-finite values for gripper.pos; nothing was sent"):
            robot.send_action({**sent, "gripper.pos": float("nan")})
        with pytest.raises(ValueError, match="action lacks gripper.pos"):
            robot.send_action({k: v for k, v in sent.items() if k != "gripper.pos"})
        twin = rig["twin"]
        os.killpg(twin.pid, signal.SIGSTOP)
        try:
            errors: list[str] = []

            def refused() -> bool:
                try:
                    robot.get_observation()
                except TopicError as exc:
                    errors.append(str(exc))
                    return True
                return False

            wait_until(refused, 10, what="get_observation to refuse the paused twin's topics")
        finally:
            os.killpg(twin.pid, signal.SIGCONT)
        assert re.fullmatch(
            r"/sim/(joint_states|front/image_raw|wrist/image_raw) is stale: its newest message is 0\.[5-9]\d s old "
            r"\(limit 0\.5 s\); is its publisher still running\?",
            errors[0],
        ), errors[0]
        wait_until(lambda: not refused(), 30, what="observations again once the twin goes on")
    finally:
        robot.disconnect()
    assert not robot.is_connected


def test_a_topic_of_another_type_is_named_with_both_types(rig):
    from lerobot_ros.plugins.robot import RosContractRobot, RosContractRobotConfig
    from lerobot_ros.plugins.topics import TopicError

    os.environ["HF_LEROBOT_HOME"] = rig["env"]["HF_LEROBOT_HOME"]
    wrong = _contract(rig["tmp"] / "wrong.yaml", **{"/sim/wrist/image_raw": "/sim/task"})
    with pytest.raises(TopicError) as caught:
        RosContractRobot(RosContractRobotConfig(contract=str(wrong), id="wrong", connect_timeout_s=3))
    assert "/sim/task is std_msgs/msg/String, the contract reads sensor_msgs/msg/Image" in str(caught.value)
    assert "\n" not in str(caught.value)
