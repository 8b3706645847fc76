"""Hardware nodes against emulated hardware: robot_node loop rate and camera_node rate/latency.

1. robot_node read-write loop rate on an emulated SO-101 follower bus, against LeRobot's own
   `robot.get_observation()` + `robot.send_action()` loop on the same bus in the same run
   (goal: >= 0.9 of it). Both are counted on the bus itself: instruction packets served / 2 per loop
   (one sync read + one sync write), so neither side can over-report.
2. camera_node (its executable, in its own process) reading a 640x480 video file at 30 fps, with
   subscribers on image_raw and image_raw/compressed (so it decodes, converts and jpeg-encodes): publish
   rate, dropped frames (gaps in the capture stamps) and capture -> subscriber latency measured in
   this process (goals: 30 fps sustained, no dropped frames, p99 latency <= 10 ms).
Usage: python bench/hardware.py [--seconds 10] [--full]   (--full: 60 s of camera, as the issue names)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 50))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import CompressedImage, Image  # noqa: E402

from lerobot_ros.codecs import time_to_ns  # noqa: E402
from lerobot_ros.hardware.devices import make_follower  # noqa: E402
from lerobot_ros.hardware.virtual.arms import VirtualArm  # noqa: E402
from lerobot_ros.ros.qos import SENSOR_QOS  # noqa: E402
from lerobot_ros.ros.runtime import RosRuntime  # noqa: E402

ROBOT_GOAL = 0.9
CAMERA_FPS, LATENCY_GOAL_MS = 30.0, 10.0


def lerobot_loop_rate(arm: VirtualArm, cal: str, seconds: float) -> float:
    """Loops/s of LeRobot's get_observation + send_action, counted as bus packets / 2."""
    robot = make_follower("so101_follower", arm.port, calibration_file=cal)
    robot.connect(calibrate=False)
    try:
        action = {k: 0.0 for k in robot.action_features}
        action["gripper.pos"] = 50.0
        robot.get_observation()
        start_packets, t0 = arm.bus.packets_served, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            robot.get_observation()
            robot.send_action(action)
        elapsed = time.perf_counter() - t0
        return (arm.bus.packets_served - start_packets) / 2 / elapsed
    finally:
        robot.disconnect()


def robot_node_rate(arm: VirtualArm, cal: str, seconds: float) -> tuple[float, float]:
    """(loops/s from bus packets, joint_states/s published) for robot_node asked to run as fast as it can.

    No subscriber in this process during the measurement: the reference loop has none either.
    """
    from lerobot_ros.nodes.robot_node import RobotNode
    from lerobot_ros.codecs import numpy_to_float64_multi_array
    from std_msgs.msg import Float64MultiArray

    with RosRuntime() as ros:
        params = [Parameter("robot_type", value="so101_follower"), Parameter("port", value=arm.port),
                  Parameter("calibration_file", value=cal), Parameter("rate_hz", value=5000.0),
                  Parameter("watchdog_s", value=3600.0)]
        node = ros.add_node(RobotNode(context=ros.context, namespace="/follower", parameter_overrides=params))
        probe = ros.create_node("bench_probe")
        pub = probe.create_publisher(Float64MultiArray, "/follower/commands", 10)
        time.sleep(1.0)
        pub.publish(numpy_to_float64_multi_array(np.zeros(6)))  # one command: the node writes every loop
        time.sleep(0.5)
        published = []
        original = node.state_pub.publish
        node.state_pub.publish = lambda msg: (published.append(1), original(msg))
        start_packets, t0 = arm.bus.packets_served, time.perf_counter()
        time.sleep(seconds)
        elapsed = time.perf_counter() - t0
        packets, rx = arm.bus.packets_served - start_packets, len(published)
        node.close()
    return packets / 2 / elapsed, rx / elapsed


def write_video(path: Path, frames: int = 90) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), CAMERA_FPS, (640, 480))
    y, x = np.mgrid[0:480, 0:640]
    for i in range(frames):
        frame = np.stack([(x + 4 * i) & 255, y & 255, (x ^ y) & 255], axis=-1).astype(np.uint8)
        writer.write(frame)
    writer.release()


def camera_run(seconds: float, workdir: Path) -> dict:
    video = workdir / "bench.avi"
    write_video(video)
    cmd = [sys.executable, "-m", "lerobot_ros.nodes.camera_node", "--ros-args", "-p", f"source:={video}",
           "-p", "camera_name:=bench_cam", "-p", f"fps:={CAMERA_FPS}", "-p", "loop:=true",
           "-p", "publish_compressed:=true"]
    proc = subprocess.Popen(cmd, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stamps, latencies = [], []
    try:
        with RosRuntime() as ros:
            probe = ros.create_node("bench_camera_probe")

            def on_image(msg: Image) -> None:
                now = time.time_ns()
                stamp = time_to_ns(msg.header.stamp)
                stamps.append(stamp)
                latencies.append((now - stamp) / 1e6)

            probe.create_subscription(Image, "/bench_cam/image_raw", on_image, SENSOR_QOS)
            # A recorder would take the jpeg stream too: subscribe so the node pays for the encoding.
            probe.create_subscription(CompressedImage, "/bench_cam/image_raw/compressed", lambda m: None, SENSOR_QOS)
            deadline = time.monotonic() + 60
            while not stamps:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("camera_node published nothing: " + (proc.stderr.read() if proc.poll() is not None else "timeout"))
                time.sleep(0.05)
            time.sleep(1.0)  # warm-up
            first = len(stamps)
            time.sleep(seconds)
            window_stamps = np.array(stamps[first:], dtype=np.int64)
            window_lat = np.array(latencies[first:])
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    gaps = np.diff(window_stamps) / 1e9
    dropped = int(np.sum(np.maximum(np.round(gaps * CAMERA_FPS) - 1, 0)))
    span = (window_stamps[-1] - window_stamps[0]) / 1e9 if window_stamps.size > 1 else float("nan")
    return {
        "camera_fps": float((window_stamps.size - 1) / span) if span > 0 else 0.0,
        "camera_frames": int(window_stamps.size),
        "camera_dropped": dropped,
        "latency_p50_ms": float(np.percentile(window_lat, 50)),
        "latency_p99_ms": float(np.percentile(window_lat, 99)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measuring time per part (default 10)")
    parser.add_argument("--full", action="store_true", help="60 s of camera streaming, as the issue names")
    parser.add_argument("--rounds", type=int, default=3, help="alternating reference/node rounds (default 3)")
    args = parser.parse_args()
    cam_seconds = 60.0 if args.full else args.seconds
    with tempfile.TemporaryDirectory(prefix="bench_hw_") as tmp:
        workdir = Path(tmp)
        arm = VirtualArm("so101", "follower", port=workdir / "follower")
        cal = str(arm.write_calibration(workdir / "follower.json"))
        arm.start()
        try:
            # Interleave reference and node rounds so a change in machine load hits both alike.
            refs, nodes, pubs = [], [], []
            for _ in range(args.rounds):
                refs.append(lerobot_loop_rate(arm, cal, args.seconds / args.rounds))
                rate, pub_rate = robot_node_rate(arm, cal, args.seconds / args.rounds)
                nodes.append(rate)
                pubs.append(pub_rate)
            ref, node_rate, js_rate = float(np.mean(refs)), float(np.mean(nodes)), float(np.mean(pubs))
        finally:
            arm.close()
        cam = camera_run(cam_seconds, workdir)
    ratio = node_rate / ref if ref else 0.0
    camera_ok = cam["camera_fps"] >= CAMERA_FPS * 0.98 and cam["camera_dropped"] == 0 and cam["latency_p99_ms"] <= LATENCY_GOAL_MS
    rows = [
        ("LeRobot get_observation+send_action loop", f"{ref:8.1f} loops/s", "reference"),
        ("robot_node read-write loop", f"{node_rate:8.1f} loops/s", f"ratio {ratio:.2f} (goal >= {ROBOT_GOAL})"),
        ("robot_node joint_states published", f"{js_rate:8.1f} msg/s", ""),
        (f"camera_node 640x480 @ {CAMERA_FPS:g} fps ({cam_seconds:g} s)", f"{cam['camera_fps']:8.2f} fps", f"{cam['camera_frames']} frames, {cam['camera_dropped']} dropped"),
        ("capture -> subscriber latency", f"p50 {cam['latency_p50_ms']:.2f} ms", f"p99 {cam['latency_p99_ms']:.2f} ms (goal <= {LATENCY_GOAL_MS:g})"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>18}  {note}")
    print(json.dumps({
        "bench": "hardware",
        "figure": round(ratio, 3),
        "goal": ROBOT_GOAL,
        "goal_op": ">=",
        "meets_goal": bool(ratio >= ROBOT_GOAL and camera_ok),
        "robot_meets_goal": bool(ratio >= ROBOT_GOAL),
        "camera_meets_goal": bool(camera_ok),
        "lerobot_loops_per_s": round(ref, 1),
        "robot_node_loops_per_s": round(node_rate, 1),
        "robot_ratio_per_round": [round(n / r, 3) for n, r in zip(nodes, refs)],
        "camera_seconds": cam_seconds,
        **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in cam.items()},
    }))


if __name__ == "__main__":
    main()
