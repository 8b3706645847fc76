"""The demo's loop on the two composed MuJoCo twins, each through its launch file as a user runs it (sim <-> real by
launch file): operators drive the twin, the recorder writes episodes with the robot's shipped contract, the
converter makes a LeRobotDataset named and ordered exactly as lerobot-record writes for LeRobot's class
(bi_so_follower, lekiwi), lerobot-train trains a tiny ACT on it, and the policy node drives the twin with it. The
pair is also recorded by LeRobot's own lerobot-record through the ros_contract plugin, teleoperated by LeRobot's
own bi_so_leader on the same two emulated leaders.

The operators hold one command for the whole recording (two emulated leader arms at fixed poses through real
teleop_nodes for the pair; LeKiwi's two operator halves for LeKiwi), so the dataset's action has no spread and
the trained policy's output, un-normalised with the dataset's statistics, is that command: the twin driven by
the policy node goes back to the demonstrated pose (and, for LeKiwi, drives at the demonstrated velocity)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import numpy_to_float64_multi_array
from lerobot_ros.conventions.joints import ARM_JOINTS
from lerobot_ros.demo.train import train_act
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, call_service, wait_until
from lerobot_ros.testing.base_driving import twist
from lerobot_ros.testing.datasets import contract_with_image_shapes, convert_recordings, load, recorder_count
from lerobot_ros.testing.launching import Launch
from lerobot_ros_msgs.srv import StartEpisode, StopEpisode

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200), pytest.mark.usefixtures("own_ros_domain")]

BIN = Path(sys.executable).parent
START_TIMEOUT = 300.0  # LeRobot's imports in several nodes on a loaded 2-core machine
PAIR_NAMES = [f"{side}_{j}" for side in ("left", "right") for j in ARM_JOINTS]
H, W = 48, 64  # the twins render small here; the contracts are rewritten to match
SMALL = ["env.observation_width:=64", "env.observation_height:=48"]
LEFT_POSE = [0.3, 0.2, -0.2, 0.0, 0.0, 0.0]
RIGHT_POSE = [-0.3, -0.2, 0.2, 0.0, 0.0, 0.0]
ARM_POSE = [0.25, -0.2, 0.2, 0.1, 0.0, 0.0]  # LeKiwi's arm goals, rad
BASE_TWIST = (0.05, 0.0, 0.2)  # LeKiwi's base: x m/s, y m/s, yaw rad/s


def record(node, diagnostics, topic: str, drive, seconds: float = 3.0, episodes: int = 2) -> None:
    """`episodes` episodes of `seconds` each, `drive()` called at 30 Hz meanwhile; each one holds `topic`."""
    for i in range(episodes):
        started = call_service(node, StartEpisode, "/recorder/start_episode", StartEpisode.Request(task="hold"))
        assert started.success, started.message
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            drive()
            time.sleep(1 / 30)
        wait_until(lambda: (recorder_count(diagnostics, topic) or 0) > 0, 30, what=f"episode {i}'s {topic} count")
        stopped = call_service(node, StopEpisode, "/recorder/stop_episode", StopEpisode.Request(outcome="success"))
        assert stopped.success, stopped.message


def lerobot_record_pair(tmp_path: Path, contract: Path, env: dict):
    """lerobot-record: --robot.type=ros_contract on the pair's contract, --teleop.type=bi_so_leader on the two emulated
    leaders (their calibration files named as bi_so_leader looks them up: <id>_left, <id>_right)."""
    calibration = tmp_path / "pair_calibration"
    calibration.mkdir()
    for side in ("left", "right"):
        (calibration / f"pair_{side}.json").write_text(
            (tmp_path / side / "calibration" / "virtual_leader.json").read_text()
        )
    root = tmp_path / "lerobot_record"
    argv = [
        str(BIN / "lerobot-record"),
        "--robot.type=ros_contract",
        f"--robot.contract={contract}",
        "--robot.id=pair",
        "--robot.connect_timeout_s=120",
        "--teleop.type=bi_so_leader",
        "--teleop.id=pair",
        f"--teleop.calibration_dir={calibration}",
        f"--teleop.left_arm_config.port={tmp_path / 'left' / 'so101_leader'}",
        f"--teleop.right_arm_config.port={tmp_path / 'right' / 'so101_leader'}",
        "--dataset.repo_id=local/pair",
        f"--dataset.root={root}",
        "--dataset.single_task=hold",
        "--dataset.num_episodes=1",
        "--dataset.episode_time_s=4",
        "--dataset.reset_time_s=0",
        "--dataset.fps=30",
        "--dataset.push_to_hub=false",
        "--play_sounds=false",
        "--display_data=false",
    ]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return load(root)


def convert_and_train(out: Path, contract: Path, tmp_path: Path, env: dict):
    dataset = convert_recordings(out, contract, tmp_path / "dataset", env, repo_id="local/dataset")
    assert dataset.meta.total_episodes == 2 and len(dataset) > 120  # two episodes of 3 s at 30 fps
    trained = train_act(
        tmp_path / "dataset", "local/dataset", tmp_path / "train", 4, tmp_path / "train.log", batch_size=2
    )
    assert (trained.checkpoint / "model.safetensors").is_file()
    return dataset, trained.checkpoint


def test_the_twin_pair_teleoperated_recorded_trained_and_driven_by_its_policy(ros, tmp_path):
    from lerobot.robots.bi_so_follower import BiSOFollower, BiSOFollowerConfig
    from lerobot.robots.so_follower import SOFollowerConfig

    env = dict(os.environ, PYTHONUNBUFFERED="1")
    contract = contract_with_image_shapes("bi_so101", tmp_path / "bi_so101_small.yaml", {"front": (H, W)})
    leaders = {}
    for side, pose in (("left", LEFT_POSE), ("right", RIGHT_POSE)):
        leaders[side] = subprocess.Popen(
            [str(BIN / "lerobot-ros"), "virtual-arm", "so101", "--role", "leader"]
            + ["--output_dir", str(tmp_path / side), "--leader_pose=" + ",".join(map(str, pose))],
            env=env,
            stdout=subprocess.DEVNULL,
        )
    for side in leaders:
        wait_until(lambda s=side: (tmp_path / s / "so101_leader").exists(), 120, what=f"the {side} leader's port")
    out = tmp_path / "recordings"
    args = ["sim_bi_so101", *SMALL, "teleop:=true", "record:=true", f"output_dir:={out}", f"contract:={contract}"]
    for side in leaders:
        args += [
            f"{side}_leader.port:={tmp_path / side / 'so101_leader'}",
            f"{side}_leader.calibration_file:={tmp_path / side / 'calibration' / 'virtual_leader.json'}",
        ]
    launch = Launch(args, env)
    node = ros.create_node("twin_pair_probe")
    pair = MessageCollector(node, JointState, "/bimanual/joint_states", SENSOR_QOS)
    diagnostics = MessageCollector(node, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
    target = np.array(LEFT_POSE + RIGHT_POSE)

    def at_target(tol: float) -> bool:
        return bool(pair.messages) and float(np.abs(np.asarray(pair.messages[-1].position) - target).max()) < tol

    try:
        try:  # the leaders (through two teleop_nodes and bimanual_node) move both twin arms to their poses
            wait_until(lambda: at_target(0.06), START_TIMEOUT, what="both twin arms at their leader's pose")
        except TimeoutError:
            pytest.fail("the twin pair never reached the leaders\n" + "\n".join(launch.lines[-60:]))
        record(node, diagnostics, "/bimanual/joint_states", lambda: None)
        launch.stop()
        # LeRobot's own lerobot-record with LeRobot's own bi_so_leader on the same two leaders, driving the twin pair
        # through the ros_contract robot plugin (no teleop_node: the launch file without teleop)
        launch = Launch(["sim_bi_so101", *SMALL], env)
        lerobot_dataset = lerobot_record_pair(tmp_path, contract, env)
    finally:
        launch.stop()
        for proc in leaders.values():
            proc.terminate()
            proc.wait(timeout=30)
    features = lerobot_dataset.meta.features
    assert features["observation.state"]["names"] == [f"{n}.pos" for n in PAIR_NAMES]
    assert features["action"]["names"] == [f"{n}.pos" for n in PAIR_NAMES]
    state = np.asarray(lerobot_dataset[len(lerobot_dataset) - 1]["observation.state"])
    keep = [0, 1, 2, 6, 7, 8]  # the joints the leaders hold away from mid-range (degrees)
    assert state[keep] == pytest.approx([math.degrees(v) for v in np.array(LEFT_POSE + RIGHT_POSE)[keep]], abs=3.0)

    dataset, checkpoint = convert_and_train(out, contract, tmp_path, env)
    arm = SOFollowerConfig(port="/dev/null")
    robot = BiSOFollower(BiSOFollowerConfig(left_arm_config=arm, right_arm_config=arm, calibration_dir=tmp_path))
    assert dataset.meta.robot_type == "bi_so_follower"
    features = dataset.meta.features
    assert features["observation.state"]["names"] == [k for k in robot.observation_features if k.endswith(".pos")]
    assert features["action"]["names"] == list(robot.action_features)
    assert features["observation.images.front"]["shape"][:2] in ([H, W], (H, W))
    last = dataset[len(dataset) - 1]
    degrees = [math.degrees(v) for v in target]
    grippers = [5, 11]  # 0..100 of the gripper's range, not degrees
    keep = [i for i in range(12) if i not in grippers]
    assert np.asarray(last["action"])[keep] == pytest.approx(np.asarray(degrees)[keep], abs=1.0)

    # the trained policy drives the twin pair back to the demonstrated pose from where the twin starts (mid-range)
    launch = Launch(["sim_bi_so101", *SMALL, f"policy.path:={checkpoint}", f"contract:={contract}"], env)
    pair.messages.clear()
    try:
        try:
            wait_until(lambda: at_target(0.08), START_TIMEOUT, what="the policy driving the twins to the pose")
        except TimeoutError:
            pytest.fail("the policy never drove the twin pair to the pose\n" + "\n".join(launch.lines[-60:]))
    finally:
        launch.stop()


def test_the_lekiwi_twin_driven_recorded_trained_and_driven_by_its_policy(ros, tmp_path):
    from lerobot.robots.lekiwi import LeKiwi, LeKiwiConfig

    env = dict(os.environ, PYTHONUNBUFFERED="1")
    contract = contract_with_image_shapes(
        "lekiwi", tmp_path / "lekiwi_small.yaml", {"front": (H, W), "wrist": (W, H)}
    )  # the wrist camera is turned (portrait), as on the real LeKiwi
    out = tmp_path / "recordings"
    launch = Launch(["sim_lekiwi", *SMALL, "record:=true", f"output_dir:={out}", f"contract:={contract}"], env)
    node = ros.create_node("twin_kiwi_probe")
    state = MessageCollector(node, Float64MultiArray, "/lekiwi/robot_state", SENSOR_QOS)
    odom = MessageCollector(node, Odometry, "/lekiwi/odom", SENSOR_QOS)
    diagnostics = MessageCollector(node, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
    arm_half = node.create_publisher(Float64MultiArray, "/lekiwi/teleop/arm", SENSOR_QOS)
    base_half = node.create_publisher(Twist, "/lekiwi/teleop/cmd_vel", SENSOR_QOS)

    def operate() -> None:  # what a leader arm's teleop_node and twist_teleop publish
        arm_half.publish(numpy_to_float64_multi_array(np.array(ARM_POSE)))
        base_half.publish(twist(*BASE_TWIST))

    def demonstrated(tol_arm: float, tol_base: float) -> bool:
        if not state.messages:
            return False
        s = np.asarray(state.messages[-1].data)
        return bool(np.abs(s[:5] - ARM_POSE[:5]).max() < tol_arm and np.abs(s[6:] - BASE_TWIST).max() < tol_base)

    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not demonstrated(0.06, 0.01):
            if time.monotonic() > deadline:
                pytest.fail("the operator never moved the LeKiwi twin\n" + "\n".join(launch.lines[-60:]))
            operate()
            time.sleep(1 / 30)
        record(node, diagnostics, "/lekiwi/robot_state", operate)
    finally:
        launch.stop()

    dataset, checkpoint = convert_and_train(out, contract, tmp_path, env)
    robot = LeKiwi(LeKiwiConfig(port="/dev/null", cameras={}, calibration_dir=tmp_path))
    assert dataset.meta.robot_type == "lekiwi"
    features = dataset.meta.features
    assert features["observation.state"]["names"] == list(robot.observation_features)  # no cameras configured
    assert features["action"]["names"] == list(robot.action_features)
    assert features["observation.images.wrist"]["shape"][:2] in ([W, H], (W, H))
    last = np.asarray(dataset[len(dataset) - 1]["action"])
    assert last[6:] == pytest.approx([BASE_TWIST[0], BASE_TWIST[1], math.degrees(BASE_TWIST[2])], abs=1e-6)

    # the trained policy drives the twin: the arm to the demonstrated pose, the base at the demonstrated twist
    launch = Launch(["sim_lekiwi", *SMALL, f"policy.path:={checkpoint}", f"contract:={contract}"], env)
    state.messages.clear()
    odom.messages.clear()
    try:
        try:
            wait_until(lambda: demonstrated(0.08, 0.02), START_TIMEOUT, what="the policy driving the LeKiwi twin")
        except TimeoutError:
            pytest.fail("the policy never drove the LeKiwi twin\n" + "\n".join(launch.lines[-60:]))
        assert (
            odom.messages
            and math.hypot(odom.messages[-1].pose.pose.position.x, odom.messages[-1].pose.pose.position.y) > 0
        )
    finally:
        launch.stop()
