"""Who got through: an intruder that tries to command and read a robot, and a witness on the robot's host.

Run inside the namespaces of lerobot_ros.testing.netns (tests/e2e/test_network_boundary.py,
tests/e2e/test_secure_two_hosts.py). Every ROS role but `intruder` first puts the network mode of its
environment in force, as a node does; each spins in a RosRuntime until `--seconds` or SIGINT/SIGTERM.


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
Each writes one JSON object with its counts to `--out` when done.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

MARK = 0.4242


def _counts_out(path: Path, counts: dict) -> None:
    with path.open("a") as out:
        out.write(json.dumps(counts) + "\n")


def _marked(values) -> bool:
    return len(values) > 0 and all(abs(v - MARK) < 1e-9 for v in values)


@contextlib.contextmanager
def _node(name: str, network: bool = True) -> Iterator:
    """A node spinning in its own thread; with `network`, the environment's network mode checked first."""
    from lerobot_ros.ros.network import apply_network_mode
    from lerobot_ros.ros.runtime import RosRuntime

    if network:
        apply_network_mode()
    with RosRuntime() as ros:
        yield ros.create_node(name)


def _run(seconds: float, step=None) -> None:
    """Until `seconds` pass or SIGINT / SIGTERM arrives, calling `step()` every 10 ms when given."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end and not stop.is_set():
            if step is not None:
                step()
            time.sleep(0.01)
    except KeyboardInterrupt:
        pass


def intruder(seconds: float, out: Path) -> dict:
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from std_srvs.srv import SetBool

    from lerobot_ros.ros.qos import SENSOR_QOS

    counts = {"published": 0, "service_calls": 0, "service_replies": 0, "read": 0}
    pending: list = []
    with _node("intruder", network=False) as node:  # whatever the test's environment says

        def on_state(msg) -> None:
            counts["read"] += int(not _marked(msg.position))  # another intruder's fakes are not the robot's

        node.create_subscription(JointState, "/follower/joint_states", on_state, SENSOR_QOS)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        commands = node.create_publisher(Float64MultiArray, "/follower/commands", reliable)
        joint_command = node.create_publisher(JointState, "/follower/joint_command", reliable)
        fake_states = node.create_publisher(JointState, "/follower/joint_states", reliable)
        torque = node.create_client(SetBool, "/follower/set_torque")
        next_call = [time.monotonic()]

        def attack() -> None:
            commands.publish(Float64MultiArray(data=[MARK] * 6))
            joint_command.publish(JointState(name=["shoulder_pan"], position=[MARK]))
            fake_states.publish(JointState(name=["shoulder_pan"], position=[MARK]))
            counts["published"] += 3
            if time.monotonic() >= next_call[0]:
                pending.append(torque.call_async(SetBool.Request(data=False)))
                counts["service_calls"] += 1
                next_call[0] += 1.0

        _run(seconds, attack)
        deadline = time.monotonic() + 2.0  # replies to the last calls
        while time.monotonic() < deadline and not all(f.done() for f in pending):
            time.sleep(0.05)
    counts["service_replies"] = sum(1 for f in pending if f.done() and f.result() is not None)
    _counts_out(out, counts)
    return counts


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
    sends = [
        ["/follower/joint_states", "sensor_msgs/msg/JointState"],
        ["/follower/commands", "std_msgs/msg/Float64MultiArray"],
    ]
    try:
        with socket.create_connection((host, int(port)), timeout=5) as raw, ctx.wrap_socket(raw) as sock:
            write_frame(sock, HELLO_INDEX, json.dumps({"protocol": 1, "host": "intruder", "sends": sends}).encode())
            for _ in range(20):
                write_frame(sock, 0, b"fake")
            index, _payload = read_frame(sock)  # TLS 1.3: a refused client certificate shows here
            result["outcome"] = f"answered (frame {index})"
    except (OSError, ssl.SSLError, ConnectionError) as exc:
        result["outcome"] = f"refused: {type(exc).__name__}: {exc}"[:200]
    _counts_out(out, result)
    return result


def holder(seconds: float, out: Path) -> dict:
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS

    counts = {"joint_states": 0, "commands": 0}
    with _node("holder") as node:
        commands = node.create_publisher(Float64MultiArray, "/follower/commands", RELIABLE_QOS)

        def on_state(msg) -> None:
            if _marked(msg.position) or len(msg.position) != 6:
                return
            counts["joint_states"] += 1
            commands.publish(Float64MultiArray(data=list(msg.position)))
            counts["commands"] += 1

        node.create_subscription(JointState, "/follower/joint_states", on_state, SENSOR_QOS)
        _run(seconds)
    _counts_out(out, counts)
    return counts


def operator(seconds: float, out: Path) -> dict:
    from lerobot_ros.ros.runtime import call_service
    from lerobot_ros_msgs.srv import StartEpisode, StopEpisode

    result: dict = {}
    with _node("operator") as node:
        started = call_service(
            node, StartEpisode, "/recorder/start_episode", StartEpisode.Request(task="over the link"), seconds
        )
        result["started"] = {"success": started.success, "index": started.episode_index}
        if started.success:
            time.sleep(2.0)
            stopped = call_service(
                node, StopEpisode, "/recorder/stop_episode", StopEpisode.Request(outcome="success"), seconds
            )
            result["stopped"] = {"success": stopped.success, "bag_path": stopped.bag_path}
    _counts_out(out, result)
    return result


def witness(seconds: float, out: Path) -> dict:
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.ros.qos import SENSOR_QOS

    counts = {"commands": 0, "marked_commands": 0, "joint_states": 0, "marked_joint_states": 0}
    with _node("witness") as node:  # the host's own network settings, checked as a node checks them

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
        _run(seconds)
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
