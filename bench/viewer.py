"""Benchmark: does the live viewer slow the robot? Camera fps seen by another subscriber, without and with it.

Set-up (each in its own process): camera_node plays a 640x480 video file at 30 fps (sensor QoS, raw rgb8);
this process publishes joint states at 100 Hz and counts the camera frames it receives (the "robot side"
subscriber); `lerobot-ros view` (viewer_node, serving the web viewer, no browser attached) subscribes the same
topics through a contract with that camera and that joint state (SO-101 names, so it also runs the URDF pose).
Phases: without viewer, with viewer, without again (the two reference phases are averaged, so drift of the
shared machine's load does not count against the viewer). Reported: camera fps per phase, joint-state rate,
the viewer's and the camera node's CPU (psutil, % of one core), the viewer's frames shown / received.
Figure = camera fps with the viewer / without; goal >= 0.98.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 80))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

H, W, FPS, JOINT_HZ = 480, 640, 30.0, 100.0
JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
CONTRACT = f"""
version: 1
robot_type: so101_follower
fps: 30
features:
  action:
    topic: /bench/commands
    type: std_msgs/msg/Float64MultiArray
    names: [{", ".join(j + ".pos" for j in JOINTS)}]
    transforms: [rad2deg]
    timeline: receive
  observation.state:
    topic: /bench/joint_states
    type: sensor_msgs/msg/JointState
    qos: sensor
    joints: [{", ".join(JOINTS)}]
    transforms: [rad2deg]
  observation.images.front:
    topic: /bench/camera/image_raw
    type: sensor_msgs/msg/Image
    qos: sensor
    shape: [{H}, {W}, 3]
"""


def write_video(path: Path, frames: int = 90) -> None:
    """A camera-like clip (lerobot_ros.testing.bags frames) as MJPG, looped by camera_node."""
    import cv2

    from lerobot_ros.testing.bags import camera_frame

    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, (W, H))
    for i in range(frames):
        writer.write(cv2.cvtColor(camera_frame(i, H, W), cv2.COLOR_RGB2BGR))
    writer.release()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd, env) -> subprocess.Popen:
    return subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class Counter:
    """Camera frames and joint states received here, with their receive times."""

    def __init__(self):
        self.lock = threading.Lock()
        self.frames: list[float] = []
        self.joints: list[float] = []

    def on_frame(self, _raw) -> None:
        with self.lock:
            self.frames.append(time.monotonic())

    def on_joint(self, _msg) -> None:
        with self.lock:
            self.joints.append(time.monotonic())

    def rate(self, which: str, t0: float, t1: float) -> float:
        with self.lock:
            times = [t for t in getattr(self, which) if t0 <= t < t1]
        return (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else 0.0


def measure(counter: Counter, seconds: float, procs: dict) -> dict:
    import psutil

    handles = {k: psutil.Process(p.pid) for k, p in procs.items() if p is not None and p.poll() is None}

    def cpu(h):  # the process and its children (lerobot-ros re-executes itself once at start-up)
        return sum(x.cpu_times().user + x.cpu_times().system for x in [h, *h.children(recursive=True)])

    before = {k: cpu(h) for k, h in handles.items()}
    t0 = time.monotonic()
    time.sleep(seconds)
    t1 = time.monotonic()
    out = {"camera_fps": counter.rate("frames", t0, t1), "joint_hz": counter.rate("joints", t0, t1)}
    for k, h in handles.items():
        out[f"{k}_cpu_pct"] = 100.0 * (cpu(h) - before[k]) / (t1 - t0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="length of each measured phase")
    ap.add_argument("--warmup", type=float, default=8.0, help="seconds before measuring, after a process starts")
    args = ap.parse_args()

    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image, JointState

    from lerobot_ros.codecs import numpy_to_joint_state
    from lerobot_ros.ros.runtime import RosRuntime

    env = dict(os.environ, PYTHONUNBUFFERED="1")
    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        video, contract = Path(tmp) / "clip.avi", Path(tmp) / "bench_viewer.yaml"
        write_video(video)
        contract.write_text(CONTRACT)
        camera = start(
            [
                str(bindir / "camera_node"),
                "--ros-args",
                "-r",
                "__ns:=/bench",
                "-p",
                f"source:={video}",
                "-p",
                "loop:=true",
                "-p",
                f"fps:={FPS}",
                "-p",
                "camera_name:=camera",
                "-p",
                "publish_compressed:=false",
            ],
            env,
        )
        ros = RosRuntime().start()
        viewer = None
        try:
            node = ros.create_node("bench_robot_side")
            counter = Counter()
            node.create_subscription(
                Image, "/bench/camera/image_raw", counter.on_frame, qos_profile_sensor_data, raw=True
            )
            node.create_subscription(JointState, "/bench/joint_states", counter.on_joint, qos_profile_sensor_data)
            pub = node.create_publisher(JointState, "/bench/joint_states", qos_profile_sensor_data)
            t_start = time.monotonic()
            node.create_timer(
                1.0 / JOINT_HZ,
                lambda: pub.publish(
                    numpy_to_joint_state(JOINTS, position=0.5 * np.sin(time.monotonic() - t_start + np.arange(6)))
                ),
            )
            deadline = time.monotonic() + 120
            while not counter.frames and time.monotonic() < deadline:
                time.sleep(0.2)
            if not counter.frames:
                print("error: camera_node published no frame in 120 s", file=sys.stderr)
                return 1
            time.sleep(args.warmup)
            phases = {"without_1": measure(counter, args.seconds, {"camera": camera})}
            viewer = start(
                [
                    str(bindir / "lerobot-ros"),
                    "view",
                    "--contract",
                    str(contract),
                    "--viewer",
                    "web",
                    "--web_port",
                    str(free_port()),
                    "--grpc_port",
                    str(free_port()),
                ],
                env,
            )
            viewer_lines: list[str] = []
            threading.Thread(target=lambda: viewer_lines.extend(viewer.stdout), daemon=True).start()
            deadline = time.monotonic() + 180
            while not any("[viewer] open" in line for line in viewer_lines) and time.monotonic() < deadline:
                if viewer.poll() is not None:
                    print("error: the viewer exited: " + "".join(viewer_lines)[-1000:], file=sys.stderr)
                    return 1
                time.sleep(0.2)
            time.sleep(args.warmup)
            phases["with_viewer"] = measure(counter, args.seconds, {"camera": camera, "viewer": viewer})
            stop(viewer)
            time.sleep(2.0)
            phases["without_2"] = measure(counter, args.seconds, {"camera": camera})
        finally:
            if viewer is not None:
                stop(viewer)
            stop(camera)
            ros.close()

    reference = (phases["without_1"]["camera_fps"] + phases["without_2"]["camera_fps"]) / 2
    figure = phases["with_viewer"]["camera_fps"] / reference if reference else 0.0
    print(f"{'phase':<12} {'camera fps':>10} {'joint Hz':>9} {'camera CPU %':>13} {'viewer CPU %':>13}")
    for name, p in phases.items():
        print(
            f"{name:<12} {p['camera_fps']:>10.2f} {p['joint_hz']:>9.1f} {p.get('camera_cpu_pct', 0):>13.1f} "
            f"{p.get('viewer_cpu_pct', float('nan')):>13.1f}"
        )
    viewer_cpu = phases["with_viewer"].get("viewer_cpu_pct", 0.0)
    print(
        f"camera fps with the viewer / without: {figure:.3f} (goal >= 0.98); viewer CPU {viewer_cpu:.1f}% of one core "
        f"({viewer_cpu / (os.cpu_count() or 1):.1f}% of the machine's {os.cpu_count()} cores)"
    )
    print(
        json.dumps(
            {
                "bench": "viewer",
                "figure": round(figure, 4),
                "goal": 0.98,
                "goal_op": ">=",
                "meets_goal": figure >= 0.98,
                "camera_fps_without": round(reference, 2),
                "camera_fps_with": round(phases["with_viewer"]["camera_fps"], 2),
                "viewer_cpu_pct_of_core": round(viewer_cpu, 1),
                "cores": os.cpu_count(),
                "joint_hz": round(phases["with_viewer"]["joint_hz"], 1),
                "phases": phases,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
