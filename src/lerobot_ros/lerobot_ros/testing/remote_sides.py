"""Processes that run inside the namespaces of lerobot_ros.testing.netns and say what crossed the link (JSON lines).

`robot`: on the robot host, records what the robot receives (commands, joint_command) and /diagnostics, and
optionally publishes joint_states at `--joint-hz` (the robot's state stream for the benchmark).
`policy`: on the policy host, policy_node in this process (real node, real policy) with spies that record,
per camera, when each frame arrived and how old it was, and per control tick its status and the age of
the observation each inference started from. Both write JSON lines to `--out` (one object per event) and
a final {"summary": ...} line on SIGINT/SIGTERM or after `--seconds`.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time


def so101_contract(cameras, image_hw, fps: float, compressed: bool, image_tolerance_ms: float) -> str:
    """The SO-101 contract both hosts use in tests/e2e/test_remote.py and bench/remote.py: joint states and commands
    on /follower, one (jpeg or raw) image feature per camera resized to `image_hw`."""
    from lerobot_ros.conventions.joints import SO101_JOINTS

    h, w = image_hw
    cams = "".join(
        f"""
  observation.images.{cam}:
    topic: /{cam}/image_raw{"/compressed" if compressed else ""}
    type: sensor_msgs/msg/{"CompressedImage" if compressed else "Image"}
    qos: sensor
    shape: [{h}, {w}, 3]
    timeline: header
    alignment: {{policy: nearest, tolerance_ms: {image_tolerance_ms:g}}}
    transforms: [{{resize: [{h}, {w}]}}]"""
        for cam in cameras
    )
    return f"""version: 1
robot_type: so101_follower
fps: {fps:g}
features:
  action:
    topic: /follower/commands
    type: std_msgs/msg/Float64MultiArray
    qos: reliable
    names: [{", ".join(j + ".pos" for j in SO101_JOINTS)}]
    transforms: [rad2deg]
    timeline: receive
  observation.state:
    topic: /follower/joint_states
    type: sensor_msgs/msg/JointState
    qos: sensor
    joints: [{", ".join(SO101_JOINTS)}]
    transforms: [rad2deg]
    timeline: header
    alignment: {{policy: interpolate, tolerance_ms: 100}}{cams}
"""


class Lines:
    """JSON lines to a file, flushed each line, from any thread."""

    def __init__(self, path: str):
        self._file = open(path, "a", buffering=1)  # noqa: SIM115 - closed in close()
        self._lock = threading.Lock()

    def write(self, **obj) -> None:
        with self._lock:
            self._file.write(json.dumps(obj) + "\n")

    def close(self) -> None:
        self._file.close()


def _stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def _spin_until_done(context, executor, seconds: float) -> None:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    stop.wait(seconds if seconds > 0 else None)
    executor.shutdown(timeout_sec=5.0)
    thread.join(10.0)


def robot(args) -> None:
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.codecs import numpy_to_joint_state
    from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS

    out = Lines(args.out)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("remote_robot_probe", context=context)
    counts = {"commands": 0, "joint_command": 0, "joint_states": 0}

    def on_commands(msg):
        counts["commands"] += 1
        out.write(kind="commands", t=time.time_ns(), data=list(msg.data))

    def on_joint_command(msg):
        counts["joint_command"] += 1
        out.write(kind="joint_command", t=time.time_ns(), stamp=_stamp_ns(msg), data=list(msg.position))

    def on_diagnostics(msg):
        for st in msg.status:
            out.write(
                kind="diagnostics",
                t=time.time_ns(),
                name=st.name,
                level=int.from_bytes(st.level, "little") if isinstance(st.level, bytes) else int(st.level),
                message=st.message,
                values={kv.key: kv.value for kv in st.values},
            )

    node.create_subscription(Float64MultiArray, f"{args.ns}/commands", on_commands, SENSOR_QOS)
    node.create_subscription(JointState, f"{args.ns}/joint_command", on_joint_command, SENSOR_QOS)
    node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, RELIABLE_QOS)
    if args.joint_hz > 0:
        import numpy as np

        names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
        pub = node.create_publisher(JointState, f"{args.ns}/joint_states", SENSOR_QOS)
        start = time.monotonic()

        def publish_state():
            t = time.monotonic() - start
            pub.publish(numpy_to_joint_state(names, 0.2 * np.sin(t + np.arange(6)), stamp_ns=time.time_ns()))
            counts["joint_states"] += 1

        node.create_timer(1.0 / args.joint_hz, publish_state)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    out.write(kind="ready", t=time.time_ns())
    _spin_until_done(context, executor, args.seconds)
    out.write(kind="summary", t=time.time_ns(), **counts)
    node.destroy_node()
    context.try_shutdown()
    out.close()


def policy(args) -> None:
    """policy_node (PolicyNode, in this process) with spies on its observation callback and tick loop."""
    from lerobot_ros.policy.openmp import limit_openmp_spin

    limit_openmp_spin()
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from lerobot_ros.nodes.policy_node import PolicyNode

    out = Lines(args.out)
    context = rclpy.Context()
    rclpy.init(context=context)
    overrides = [Parameter(k, value=_value(v)) for k, v in (kv.split("=", 1) for kv in args.param)]
    node = PolicyNode(context=context, parameter_overrides=overrides)
    arrivals: dict[str, int] = {}
    original = node.on_observation

    def on_observation(name, msg):
        now = time.time_ns()
        arrivals[name] = arrivals.get(name, 0) + 1
        if name.startswith("observation.images"):
            out.write(kind="frame", t=now, stream=name, age_ms=(now - _stamp_ns(msg)) / 1e6)
        original(name, msg)

    node.on_observation = on_observation  # type: ignore[method-assign]  # a spy around the node's own handler
    controller = node.loop.controller
    step = controller.step
    last_ages: dict = {}

    def spy_step(tick, values, ages_ns, *a, **kw):
        last_ages.clear()
        last_ages.update({k: v for k, v in ages_ns.items() if v is not None})
        submitted_before = controller.worker.chunks if controller.worker else None
        busy_before = controller.worker.busy if controller.worker else None
        result = step(tick, values, ages_ns, *a, **kw)
        started = controller.worker is not None and not busy_before and controller.worker.busy
        out.write(
            kind="tick",
            t=time.time_ns(),
            t_ns=current["t_ns"],
            tick=tick,
            status=result.status,
            depth=result.depth,
            submitted=bool(started),
            age_ms=(max(last_ages.values()) / 1e6) if last_ages else None,
            chunks=submitted_before,
        )
        return result

    controller.step = spy_step
    run = node.loop.run
    current = {"t_ns": None}

    def spy_run(t_ns, emit, *a, **kw):  # the tick's ROS time: the stamp of the joint_command it publishes
        current["t_ns"] = t_ns
        return run(t_ns, emit, *a, **kw)

    node.loop.run = spy_run
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    out.write(kind="ready", t=time.time_ns())
    try:
        _spin_until_done(context, executor, args.seconds)
    finally:
        out.write(
            kind="summary",
            t=time.time_ns(),
            arrivals=arrivals,
            counts=dict(controller.counts),
            inference_ms=controller.inference_stats.summary(),
        )
        node.close()
        node.destroy_node()
        context.try_shutdown()
        out.close()


def _value(text: str):
    """A parameter value from the command line: bool, int, float, list (JSON) or string."""
    if text in ("true", "false"):
        return text == "true"
    try:
        return json.loads(text)
    except ValueError:
        return text


def main(argv=None) -> None:
    import faulthandler

    faulthandler.register(signal.SIGUSR1, all_threads=True)  # `kill -USR1 PID`: every thread's stack on stderr
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("side", choices=("robot", "policy"))
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, default=0.0, help="0: until SIGINT/SIGTERM")
    parser.add_argument("--ns", default="/follower", help="robot: the robot's namespace")
    parser.add_argument("--joint-hz", type=float, default=0.0, help="robot: publish joint_states at this rate")
    parser.add_argument("--param", action="append", default=[], help="policy: policy_node parameter name=value")
    args = parser.parse_args(argv)
    (robot if args.side == "robot" else policy)(args)


if __name__ == "__main__":
    sys.exit(main())  # type: ignore[func-returns-value]  # main returns None: exit status 0
