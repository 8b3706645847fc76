"""Who got through: an intruder that tries to command and read a robot, and a witness on the robot's host.

Run inside the namespaces of lerobot_ros.testing.netns (tests/e2e/test_network_boundary.py):

`intruder`: for `--seconds`, publishes marked commands to /follower/commands (Float64MultiArray, every value
MARK) and marked joint_command, calls /follower/set_torque (std_srvs/SetBool) once a second, and reads
/follower/joint_states. Its environment is whatever the test gives it (Fast DDS defaults, a static peer ...).
`witness`: on the robot's host with the robot's own network settings, counts what arrives on
/follower/commands (the marked ones are the intruder's) and /follower/joint_states; writes a JSON line
{"ready": true} at its first joint state, so the test starts the intruder once the robot is up.
Both write one JSON object with their counts to `--out` when done (SIGINT/SIGTERM or `--seconds`).
"""

from __future__ import annotations

import argparse
import json
import signal
import time
from pathlib import Path

MARK = 0.4242


def _counts_out(path: Path, counts: dict) -> None:
    with path.open("a") as out:
        out.write(json.dumps(counts) + "\n")


def intruder(seconds: float, out: Path) -> dict:
    import rclpy
    from rclpy.client import Client
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from std_srvs.srv import SetBool

    from lerobot_ros.ros.qos import SENSOR_QOS

    rclpy.init()
    node = rclpy.create_node("intruder")
    counts = {"published": 0, "service_calls": 0, "service_replies": 0, "read": 0}

    def on_state(_msg) -> None:
        counts["read"] += 1

    node.create_subscription(JointState, "/follower/joint_states", on_state, SENSOR_QOS)
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    commands = node.create_publisher(Float64MultiArray, "/follower/commands", reliable)
    joint_command = node.create_publisher(JointState, "/follower/joint_command", reliable)
    torque: Client = node.create_client(SetBool, "/follower/set_torque")
    pending: list = []
    end = time.monotonic() + seconds
    next_call = time.monotonic()
    try:
        while time.monotonic() < end:
            commands.publish(Float64MultiArray(data=[MARK] * 6))
            joint_command.publish(JointState(name=["shoulder_pan"], position=[MARK]))
            counts["published"] += 2
            if time.monotonic() >= next_call:
                pending.append(torque.call_async(SetBool.Request(data=False)))
                counts["service_calls"] += 1
                next_call += 1.0
            rclpy.spin_once(node, timeout_sec=0.1)
        deadline = time.monotonic() + 2.0  # replies to the last calls
        while time.monotonic() < deadline and not all(f.done() for f in pending):
            rclpy.spin_once(node, timeout_sec=0.1)
    except KeyboardInterrupt:
        pass
    counts["service_replies"] = sum(1 for f in pending if f.done() and f.result() is not None)
    node.destroy_node()
    rclpy.try_shutdown()
    _counts_out(out, counts)
    return counts


def witness(seconds: float, out: Path) -> dict:
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.ros.network import apply_network_mode
    from lerobot_ros.ros.qos import SENSOR_QOS

    apply_network_mode()  # the robot's own settings, checked as a node checks them
    rclpy.init()
    node = rclpy.create_node("witness")
    counts = {"commands": 0, "marked_commands": 0, "joint_states": 0}

    def on_command(msg) -> None:
        counts["commands"] += 1
        counts["marked_commands"] += int(bool(msg.data) and all(abs(v - MARK) < 1e-9 for v in msg.data))

    def on_state(_msg) -> None:
        if counts["joint_states"] == 0:
            _counts_out(out, {"ready": True})
        counts["joint_states"] += 1

    reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    node.create_subscription(Float64MultiArray, "/follower/commands", on_command, reliable)
    node.create_subscription(JointState, "/follower/joint_states", on_state, SENSOR_QOS)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end and not stop["now"]:
            rclpy.spin_once(node, timeout_sec=0.1)
    except KeyboardInterrupt:
        pass
    node.destroy_node()
    rclpy.try_shutdown()
    _counts_out(out, counts)
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("role", choices=["intruder", "witness"])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    (intruder if args.role == "intruder" else witness)(args.seconds, args.out)


if __name__ == "__main__":
    main()
