"""The installed executables end to end: teleop_node and robot_node as their own processes, on emulated
SO-101 leader and follower buses; the follower follows the leader moved by hand, and Ctrl-C leaves the
follower with torque off."""

from __future__ import annotations

import subprocess
import sys

import pytest
from sensor_msgs.msg import JointState

from lerobot_ros.hardware.virtual.arms import MOTOR_NAMES, VirtualArm
from lerobot_ros.ros.qos import SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until
from lerobot_ros.testing.process_groups import interrupt_and_collect

pytestmark = pytest.mark.slow  # two processes importing LeRobot (torch)


def test_teleop_and_robot_processes_follow_the_leader(ros, ros_env, tmp_path):
    leader = VirtualArm("so101", "leader", port=tmp_path / "leader")
    follower = VirtualArm("so101", "follower", port=tmp_path / "follower")
    lcal, fcal = leader.write_calibration(tmp_path / "l.json"), follower.write_calibration(tmp_path / "f.json")
    leader.start()
    follower.start()
    procs = []
    try:
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "lerobot_ros.nodes.robot_node",
                    "--ros-args",
                    "-r",
                    "__ns:=/follower",
                    "-p",
                    f"robot.port:={follower.port}",
                    "-p",
                    f"robot.calibration_file:={fcal}",
                    "-p",
                    "robot.type:=so101_follower",
                ],
                env=ros_env,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "lerobot_ros.nodes.teleop_node",
                    "--ros-args",
                    "-r",
                    "__ns:=/leader",
                    "-p",
                    f"teleop.port:={leader.port}",
                    "-p",
                    f"teleop.calibration_file:={lcal}",
                    "-p",
                    "commands_topic:=/follower/commands",
                ],
                env=ros_env,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
        probe = ros.create_node("probe")
        states = MessageCollector(probe, JointState, "/follower/joint_states", SENSOR_QOS)
        states.wait_for(1, timeout=90)
        target = {"shoulder_pan": -0.7, "shoulder_lift": 0.3, "elbow_flex": -0.2, "wrist_flex": 0.6, "gripper": 0.3}
        leader.move_by_hand(target)

        def follows() -> bool:
            lead, fol = leader.joint_positions(), follower.joint_positions()
            return all(abs(lead[n] - fol[n]) < 0.01 for n in MOTOR_NAMES)

        wait_until(follows, 30, what="follower to follow the leader")
        wait_until(
            lambda: abs(dict(zip(states.messages[-1].name, states.messages[-1].position))["wrist_flex"] - 0.6) < 0.01,
            10,
            what="joint_states in radians",
        )
        assert all(s.register("Torque_Enable") == 1 for s in follower.bus.servos.values())
        for code, err in interrupt_and_collect(procs):
            assert code == 0, err
        assert all(s.register("Torque_Enable") == 0 for s in follower.bus.servos.values())  # torque off on shutdown
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        leader.close()
        follower.close()
