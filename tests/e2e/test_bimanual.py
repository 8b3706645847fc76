"""Two SO-101 arms as one robot, end to end: `lerobot-ros launch bi_so101_virtual` (a leader and a follower per side
on emulated servos, robot_node and teleop_node per arm, bimanual_node joining them). The leaders, held at
different poses, move their followers there through the pair; an episode recorded with the bi_so101 contract
converts into a dataset named as lerobot-record names bi_so_follower's; one arm's driver killed stops the pair
(ERROR on /diagnostics), which comes back when the driver respawns."""

from __future__ import annotations

import math
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState

from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, call_service, wait_until
from lerobot_ros.testing.datasets import contract_without_cameras, convert_recordings, recorder_count
from lerobot_ros.testing.launching import Launch
from lerobot_ros_msgs.srv import StartEpisode, StopEpisode

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.usefixtures("own_ros_domain")]

BIN = Path(sys.executable).parent
START_TIMEOUT = 300.0  # LeRobot's imports in four nodes and two emulators on a loaded 2-core machine
ARM = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
LEFT_POSE = [0.3, 0.0, 0.0, 0.0, 0.0, 0.0]
RIGHT_POSE = [-0.3, 0.2, 0.0, 0.0, 0.0, 0.0]


def pair_status(diagnostics: MessageCollector) -> dict:
    for array in reversed(diagnostics.messages):
        for s in array.status:
            if s.name == "/bimanual/bimanual_node: pair":
                level = s.level if isinstance(s.level, int) else ord(s.level)
                return {"level": level, "message": s.message}
    return {}


def test_two_leaders_drive_the_pair_which_records_as_bi_so_follower(ros, tmp_path):
    from lerobot.robots.bi_so_follower import BiSOFollower, BiSOFollowerConfig
    from lerobot.robots.so_follower import SOFollowerConfig

    contract = contract_without_cameras("bi_so101", tmp_path / "bi_so101_no_cameras.yaml")
    out = tmp_path / "recordings"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    launch = Launch(
        [
            "bi_so101_virtual",
            f"virtual_dir:={tmp_path / 'virtual'}",
            "left_leader_pose:=" + ",".join(map(str, LEFT_POSE)),
            "right_leader_pose:=" + ",".join(map(str, RIGHT_POSE)),
            "record:=true",
            f"output_dir:={out}",
            f"contract:={contract}",
        ],
        env,
    )
    node = ros.create_node("pair_probe")
    pair = MessageCollector(node, JointState, "/bimanual/joint_states", SENSOR_QOS)
    diagnostics = MessageCollector(node, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
    target = np.array(LEFT_POSE + RIGHT_POSE)
    try:

        def at_the_leaders() -> bool:
            return bool(pair.messages) and bool(
                np.abs(np.asarray(pair.messages[-1].position) - target)[[0, 1, 6, 7]].max() < 0.03
            )

        try:
            wait_until(at_the_leaders, START_TIMEOUT, what="both followers at their leader's pose")
        except TimeoutError:
            last = pair.messages[-1].position if pair.messages else "no /bimanual/joint_states"
            lines = [ln for ln in launch.lines if "[episode_recorder] idle" not in ln]
            pytest.fail(f"the pair never reached the leaders (last state {last})\n" + "\n".join(lines[-80:]))
        assert list(pair.messages[-1].name) == [f"left_{j}" for j in ARM] + [f"right_{j}" for j in ARM]

        # LeRobot's own Robot API through our plugin: the pair as bi_so_follower, in degrees
        from lerobot.robots import make_robot_from_config

        from lerobot_ros.plugins.robot import RosContractRobotConfig

        robot = make_robot_from_config(RosContractRobotConfig(contract=str(contract), id="pair", max_age_s=2.0))
        robot.connect()
        try:
            obs = robot.get_observation()
        finally:
            robot.disconnect()
        names = [f"{side}_{j}.pos" for side in ("left", "right") for j in ARM]
        assert list(obs) == names
        assert [obs[n] for n in names][:2] == pytest.approx([math.degrees(v) for v in LEFT_POSE[:2]], abs=2.0)
        assert [obs[n] for n in names][6:8] == pytest.approx([math.degrees(v) for v in RIGHT_POSE[:2]], abs=2.0)

        started = call_service(node, StartEpisode, "/recorder/start_episode", StartEpisode.Request(task="pair"))
        assert started.success, started.message
        wait_until(
            lambda: (recorder_count(diagnostics, "/bimanual/joint_states") or 0) > 60,
            60,
            what="the pair's joint states in the episode",
        )
        stopped = call_service(node, StopEpisode, "/recorder/stop_episode", StopEpisode.Request(outcome="success"))
        assert stopped.success, stopped.message

        # one arm's driver dies: the pair stops (both hold) and says so; it respawns and the pair is back
        right = launch.pids()["robot-2"]
        os.kill(right, signal.SIGKILL)
        # the pair stops and names the right arm (on a loaded machine the left one may also miss stale_s for a
        # moment while the right driver respawns: the status then names both, and the right alone after)
        wait_until(lambda: pair_status(diagnostics).get("level") == 2, 30, what="the pair stopped")
        wait_until(
            lambda: pair_status(diagnostics).get("message") == "no joint_states from the right arm: both arms hold",
            30,
            what="the pair's status naming the right arm",
        )
        wait_until(lambda: pair_status(diagnostics).get("level") == 0, 120, what="the pair back")
    finally:
        launch.stop()

    dataset = convert_recordings(out, contract, tmp_path / "dataset", env, repo_id="local/pair")
    robot = BiSOFollower(
        BiSOFollowerConfig(
            left_arm_config=SOFollowerConfig(port="/dev/null"),
            right_arm_config=SOFollowerConfig(port="/dev/null"),
            calibration_dir=tmp_path,
        )
    )
    assert dataset.meta.robot_type == "bi_so_follower"
    assert dataset.meta.features["observation.state"]["names"] == list(robot.observation_features)
    assert dataset.meta.features["action"]["names"] == list(robot.action_features)
    last = dataset[len(dataset) - 1]
    state, action = np.asarray(last["observation.state"]), np.asarray(last["action"])
    expected_deg = [math.degrees(v) for v in (LEFT_POSE[0], LEFT_POSE[1], RIGHT_POSE[0], RIGHT_POSE[1])]
    assert state[[0, 1, 6, 7]] == pytest.approx(expected_deg, abs=2.0)  # degrees, as lerobot-record writes
    assert action[[0, 1, 6, 7]] == pytest.approx(expected_deg, abs=2.0)  # the leaders' commands
