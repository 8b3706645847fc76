"""Who got through: an intruder that tries to command and read a robot, and a witness on the robot's host.

Run inside the namespaces of lerobot_ros.testing.netns (tests/e2e/test_network_boundary.py):

`intruder`: for `--seconds`, publishes marked commands to /follower/commands (Float64MultiArray, every value
MARK), marked joint_command and marked joint states (fake observations for a policy host), calls
/follower/set_torque (std_srvs/SetBool) once a second, and reads /follower/joint_states. Its environment is
whatever the test gives it (Fast DDS defaults, a static peer ...).
`tls_intruder`: connects to a secure link's port (`--target HOST:PORT`), with a certificate or none, and tries
to send a hello and fake frames; reports how far it got.
`witness`: on a host with that host's own network settings, counts what arrives on /follower/commands and
/follower/joint_states (the marked ones are the intruder's); writes a JSON line {"ready": true} at its first
joint state, so the test starts the intruders once the robot is up.
`holder`: a stand-in policy on the policy host: answers each joint state with a command to hold it.
`operator`: on the policy host, records one 2 s episode through the recorder's services (/recorder/start_episode,
/recorder/stop_episode), which live on the robot host: the authorised side of a service call.
Both write one JSON object with their counts to `--out` when done (SIGINT/SIGTERM or `--seconds`).
"""

from __future__ import annotations

import argparse
import json
import signal
import time
from pathlib import Path
from typing import Any

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

    def on_state(msg) -> None:
        counts["read"] += int(not _marked(msg.position))  # another intruder's fakes are not the robot's

    node.create_subscription(JointState, "/follower/joint_states", on_state, SENSOR_QOS)
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    commands = node.create_publisher(Float64MultiArray, "/follower/commands", reliable)
    joint_command = node.create_publisher(JointState, "/follower/joint_command", reliable)
    fake_states = node.create_publisher(JointState, "/follower/joint_states", reliable)
    torque: Client = node.create_client(SetBool, "/follower/set_torque")
    pending: list = []
    end = time.monotonic() + seconds
    next_call = time.monotonic()
    try:
        while time.monotonic() < end:
            commands.publish(Float64MultiArray(data=[MARK] * 6))
            joint_command.publish(JointState(name=["shoulder_pan"], position=[MARK]))
            fake_states.publish(JointState(name=["shoulder_pan"], position=[MARK]))
            counts["published"] += 3
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


def _marked(values) -> bool:
    return len(values) > 0 and all(abs(v - MARK) < 1e-9 for v in values)


def tls_intruder(target: str, cert: str, key: str, out: Path) -> dict:
    import socket
    import ssl

    from lerobot_ros.secure.link import HELLO_INDEX, read_frame, write_frame

    host, port = target.rsplit(":", 1)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE  # an intruder takes any server
    if cert:
        ctx.load_cert_chain(cert, key)
    result = {"target": target, "outcome": ""}
    try:
        with socket.create_connection((host, int(port)), timeout=5) as raw, ctx.wrap_socket(raw) as sock:
            hello = b'{"protocol": 1, "host": "intruder", "sends": [["/follower/joint_states", "sensor_msgs/msg/JointState"], ["/follower/commands", "std_msgs/msg/Float64MultiArray"]]}'
            write_frame(sock, HELLO_INDEX, hello)
            for _ in range(20):
                write_frame(sock, 0, b"fake")
            index, _payload = read_frame(sock)  # TLS 1.3: a refused client certificate shows here
            result["outcome"] = f"answered (frame {index})"
    except (OSError, ssl.SSLError, ConnectionError) as exc:
        result["outcome"] = f"refused: {type(exc).__name__}: {exc}"[:200]
    _counts_out(out, result)
    return result


def holder(seconds: float, out: Path) -> dict:
    import rclpy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.ros.network import apply_network_mode
    from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS

    apply_network_mode()
    rclpy.init()
    node = rclpy.create_node("holder")
    counts = {"joint_states": 0, "commands": 0}
    commands = node.create_publisher(Float64MultiArray, "/follower/commands", RELIABLE_QOS)

    def on_state(msg) -> None:
        if _marked(msg.position) or len(msg.position) != 6:
            return
        counts["joint_states"] += 1
        commands.publish(Float64MultiArray(data=list(msg.position)))
        counts["commands"] += 1

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


def operator(seconds: float, out: Path) -> dict:
    import rclpy

    from lerobot_ros.ros.network import apply_network_mode
    from lerobot_ros_msgs.srv import StartEpisode, StopEpisode

    apply_network_mode()
    rclpy.init()
    node = rclpy.create_node("operator")
    result: dict = {}

    def call(srv_type, name: str, request):
        client: Any = node.create_client(srv_type, name)
        if not client.wait_for_service(timeout_sec=seconds):
            return None
        future = client.call_async(request)
        rclpy.spin_until_future_complete(node, future, timeout_sec=seconds)
        return future.result()

    started = call(StartEpisode, "/recorder/start_episode", StartEpisode.Request(task="over the link"))
    result["started"] = None if started is None else {"success": started.success, "index": started.episode_index}
    if started is not None and started.success:
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.1)
        stopped = call(StopEpisode, "/recorder/stop_episode", StopEpisode.Request(outcome="success"))
        result["stopped"] = None if stopped is None else {"success": stopped.success, "bag_path": stopped.bag_path}
    node.destroy_node()
    rclpy.try_shutdown()
    _counts_out(out, result)
    return result


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
    counts = {"commands": 0, "marked_commands": 0, "joint_states": 0, "marked_joint_states": 0}

    def on_command(msg) -> None:
        counts["commands"] += 1
        counts["marked_commands"] += int(_marked(msg.data))

    def on_state(msg) -> None:
        if _marked(msg.position):
            counts["marked_joint_states"] += 1
            return
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
    parser.add_argument("role", choices=["intruder", "witness", "holder", "operator", "tls_intruder"])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--target", default="", help="tls_intruder: HOST:PORT")
    parser.add_argument("--cert", default="", help="tls_intruder: certificate (none: no certificate)")
    parser.add_argument("--key", default="")
    args = parser.parse_args(argv)
    if args.role == "tls_intruder":
        tls_intruder(args.target, args.cert, args.key, args.out)
    else:
        roles = {"intruder": intruder, "witness": witness, "holder": holder, "operator": operator}
        roles[args.role](args.seconds, args.out)


if __name__ == "__main__":
    main()
