"""twist_teleop over DDS: the keyboard through a pty driving a real base_node on emulated wheels (the keys a
terminal sends, the hold, the stop), and a gamepad's Joy messages with the deadman and the silence timeout."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from sensor_msgs.msg import Joy

from lerobot_ros.hardware.virtual.base import VirtualOmniBase
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until

pytestmark = pytest.mark.usefixtures("quick_gil_handoff")


def test_keys_in_a_terminal_drive_the_base(ros, ros_env, tmp_path):
    from lerobot_ros.nodes.base_node import BaseNode

    with VirtualOmniBase(port=tmp_path / "wheels") as wheels:
        base = ros.add_node(
            BaseNode(
                context=ros.context, namespace="/kb_base", parameter_overrides=[Parameter("port", value=wheels.port)]
            )
        )
        probe = ros.create_node("teleop_probe")
        odom = MessageCollector(probe, Odometry, "/kb_base/odom", SENSOR_QOS)
        twists = MessageCollector(probe, Twist, "/kb_base/cmd_vel", RELIABLE_QOS)
        master, slave = pty.openpty()
        cmd = [
            sys.executable,
            "-m",
            "lerobot_ros.nodes.twist_teleop_node",
            "--ros-args",
            "-r",
            "cmd_vel:=/kb_base/cmd_vel",
        ]
        log = open(tmp_path / "teleop.log", "w")
        teleop = subprocess.Popen(cmd, env=ros_env, stdin=slave, stdout=log, stderr=log)
        os.close(slave)
        try:
            wait_until(lambda: len(twists.messages) > 5, 60, what="the teleop's zero twists")
            assert all(t.linear.x == 0.0 and t.angular.z == 0.0 for t in twists.messages)  # nothing pressed: still

            def forward() -> bool:  # a held key: the terminal's auto-repeat
                os.write(master, b"i")
                return bool(odom.messages) and odom.messages[-1].pose.pose.position.x > 0.05

            wait_until(forward, 30, interval=0.1, what="the base 5 cm forward on the i key")
            os.write(master, b"k")
            wait_until(lambda: not wheels.goal_raw().any(), 5, what="the base stopped by k")
            os.write(master, b"J")  # Shift+j: strafe left
            wait_until(lambda: twists.messages[-1].linear.y > 0.19, 5, what="a strafe to the left")
            os.write(master, b"q")
            wait_until(
                lambda: "speed 0.22 m/s, turn 1.1 rad/s" in (tmp_path / "teleop.log").read_text(), 5, what="speed up"
            )
            os.close(master)  # end of input: the node ends by itself
            master = -1
            assert teleop.wait(timeout=30) == 0, (tmp_path / "teleop.log").read_text()
        finally:
            if master >= 0:
                os.close(master)
            if teleop.poll() is None:
                teleop.kill()
                teleop.wait()
            log.close()
            base.close()


def test_a_gamepad_drives_only_with_the_deadman_held_and_stops_when_silent(ros):
    from lerobot_ros.nodes.twist_teleop_node import TwistTeleop

    params = [
        Parameter("input", value="joy"),
        Parameter("joy_topic", value="/pad"),
        Parameter("input_timeout_s", value=0.3),
    ]
    node = ros.add_node(TwistTeleop(context=ros.context, namespace="/pad_base", parameter_overrides=params))
    probe = ros.create_node("pad_probe")
    twists = MessageCollector(probe, Twist, "/pad_base/cmd_vel", RELIABLE_QOS)
    pad = probe.create_publisher(Joy, "/pad", SENSOR_QOS)
    wait_until(lambda: pad.get_subscription_count() > 0, 20, what="the teleop subscribed to the pad")

    def joy(held: bool) -> Joy:
        return Joy(axes=[0.0, 1.0, 0.0, 0.5], buttons=[0, 0, 0, 0, int(held)])

    wait_until(lambda: pad.publish(joy(False)) or len(twists.messages) > 3, 10, interval=0.05, what="twists")
    assert twists.messages[-1].linear.x == 0.0  # the stick is pushed, the deadman is not held
    wait_until(
        lambda: pad.publish(joy(True)) or twists.messages[-1].linear.x == pytest.approx(0.2),
        10,
        interval=0.05,
        what="forward at full stick with the deadman held",
    )
    assert twists.messages[-1].angular.z == pytest.approx(0.5)
    wait_until(lambda: twists.messages[-1].linear.x == 0.0, 5, what="stopped once the pad went silent")
    node.close()
