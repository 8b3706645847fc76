"""LeKiwi end to end on its emulated bus: `lerobot-ros launch lekiwi_virtual record:=true` (arm ids 1-6 and wheels 7-9
on one pty, lekiwi_node driving both). A robot command (LeRobot's nine values) moves the arm and drives the base,
`robot_state` reports both; an operator's halves (a leader's goals, a teleop Twist) become one robot command; an
episode recorded with the lekiwi contract converts into a dataset named, ordered and in the units that
lerobot-record writes for `lekiwi`."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import numpy_to_float64_multi_array
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, call_service, wait_until
from lerobot_ros.testing.datasets import contract_without_cameras, convert_recordings, recorder_count
from lerobot_ros.testing.launching import Launch
from lerobot_ros_msgs.srv import StartEpisode, StopEpisode

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

BIN = Path(sys.executable).parent
START_TIMEOUT = 300.0
COMMAND = [0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0, 0.2]  # arm rad x6, x m/s, y m/s, yaw rad/s


def test_lekiwi_moves_reports_and_records_as_lerobots_lekiwi(ros, tmp_path):
    from lerobot.robots.lekiwi import LeKiwi, LeKiwiConfig

    contract = contract_without_cameras("lekiwi", tmp_path / "lekiwi_no_cameras.yaml")
    out = tmp_path / "recordings"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    launch = Launch(
        [
            "lekiwi_virtual",
            f"virtual_dir:={tmp_path / 'v'}",
            "record:=true",
            f"output_dir:={out}",
            f"contract:={contract}",
        ],
        env,
    )
    node = ros.create_node("lekiwi_probe")
    state = MessageCollector(node, Float64MultiArray, "/lekiwi/robot_state", SENSOR_QOS)
    robot_commands = MessageCollector(node, Float64MultiArray, "/lekiwi/robot_commands", RELIABLE_QOS)
    diagnostics = MessageCollector(node, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
    command = node.create_publisher(Float64MultiArray, "/lekiwi/robot_commands", RELIABLE_QOS)
    try:

        def moving() -> bool:
            command.publish(numpy_to_float64_multi_array(np.array(COMMAND)))
            if not state.messages:
                return False
            s = np.asarray(state.messages[-1].data)
            return abs(s[0] - 0.3) < 0.02 and abs(s[6] - 0.1) < 0.01 and abs(s[8] - 0.2) < 0.02

        try:
            wait_until(
                moving, START_TIMEOUT, interval=0.05, what="the arm at 0.3 rad and the base at 0.1 m/s, 0.2 rad/s"
            )
        except TimeoutError:
            pytest.fail("LeKiwi never moved as commanded\n" + "\n".join(launch.lines[-40:]))

        started = call_service(node, StartEpisode, "/recorder/start_episode", StartEpisode.Request(task="drive"))
        assert started.success, started.message
        wait_until(
            lambda: (
                command.publish(numpy_to_float64_multi_array(np.array(COMMAND)))
                or (recorder_count(diagnostics, "/lekiwi/robot_state") or 0) > 60
            ),
            60,
            interval=0.05,
            what="the robot's state in the episode",
        )
        stopped = call_service(node, StopEpisode, "/recorder/stop_episode", StopEpisode.Request(outcome="success"))
        assert stopped.success, stopped.message

        # an operator: a leader's six goals and a teleop Twist become one robot command (what a recorder reads)
        arm_half = node.create_publisher(Float64MultiArray, "/lekiwi/teleop/arm", RELIABLE_QOS)
        base_half = node.create_publisher(Twist, "/lekiwi/teleop/cmd_vel", RELIABLE_QOS)
        twist = Twist()
        twist.linear.y = 0.05

        def joined() -> bool:
            arm_half.publish(numpy_to_float64_multi_array(np.full(6, 0.1)))
            base_half.publish(twist)
            return any(np.allclose(m.data, [0.1] * 6 + [0.0, 0.05, 0.0]) for m in robot_commands.messages)

        wait_until(joined, 30, interval=0.05, what="the operator's halves joined on robot_commands")

        # LeRobot's own Robot API through our plugin (what lerobot-record / lerobot-rollout call): LeKiwi's names
        from lerobot.robots import make_robot_from_config

        from lerobot_ros.plugins.robot import RosContractRobotConfig

        robot = make_robot_from_config(RosContractRobotConfig(contract=str(contract), id="kiwi", max_age_s=2.0))
        robot.connect()
        try:
            expected_names = list(
                LeKiwi(LeKiwiConfig(port="/dev/null", calibration_dir=tmp_path, cameras={})).action_features
            )
            action = dict.fromkeys(expected_names, 0.0)
            action.update({"arm_shoulder_pan.pos": -10.0, "arm_gripper.pos": 50.0, "y.vel": 0.05})

            def driven() -> bool:
                robot.send_action(action)
                obs = robot.get_observation()
                return abs(obs["arm_shoulder_pan.pos"] + 10.0) < 1.0 and abs(obs["y.vel"] - 0.05) < 0.005

            wait_until(driven, 30, interval=0.05, what="the arm at -10 deg and the base at 0.05 m/s to the left")
            assert list(robot.get_observation()) == expected_names
        finally:
            robot.disconnect()
    finally:
        launch.stop()

    dataset = convert_recordings(out, contract, tmp_path / "dataset", env, repo_id="local/kiwi")
    robot = LeKiwi(LeKiwiConfig(port="/dev/null", calibration_dir=tmp_path, cameras={}))
    assert dataset.meta.robot_type == "lekiwi"
    assert dataset.meta.features["observation.state"]["names"] == list(robot.observation_features)
    assert dataset.meta.features["action"]["names"] == list(robot.action_features)
    last = dataset[len(dataset) - 1]
    expected = [math.degrees(0.3), 0.1, 0.0, math.degrees(0.2)]  # arm_shoulder_pan deg, x.vel, y.vel, theta.vel deg/s
    assert np.asarray(last["observation.state"])[[0, 6, 7, 8]] == pytest.approx(expected, abs=1.5)
    assert np.asarray(last["action"])[[0, 6, 7, 8]] == pytest.approx(expected, abs=1e-6)
