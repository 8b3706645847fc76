"""LeKiwi's base: cmd_vel -> wheel command latency against the single-arm command path, and the base loop's rate.

As a user runs them, base_node and robot_node are their own executables (own processes), on emulated buses
served by this process (LeKiwi's three wheel servos; an SO-101 follower), both through LeRobot's Feetech bus
at 50 Hz. Each sample publishes a new command (a Twist to /bench_base/cmd_vel, or a joint goal to
/bench_arm/commands) after a random wait (so commands land at every phase of the loops' ticks) and times
until the servo holds the new goal register (Goal_Velocity of a wheel, Goal_Position of shoulder_pan),
polled here every 0.2 ms. Base and arm samples alternate, so load changes hit both.
The issue's goal: the base loop holds 50 Hz (figure: odom messages per second over the run / 50, >= 0.98).
Usage: python bench/base.py [--samples 150]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 50))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"

import numpy as np  # noqa: E402
from geometry_msgs.msg import Twist  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from lerobot_ros.codecs import numpy_to_float64_multi_array, time_to_ns  # noqa: E402
from lerobot_ros.hardware.virtual.arms import VirtualArm  # noqa: E402
from lerobot_ros.hardware.virtual.base import VirtualOmniBase  # noqa: E402
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS  # noqa: E402
from lerobot_ros.ros.runtime import RosRuntime, wait_until  # noqa: E402

RATE_HZ, RATE_GOAL = 50.0, 0.98


def start_node(module: str, ns: str, params: dict) -> subprocess.Popen:
    cmd = [sys.executable, "-m", module, "--ros-args", "-r", f"__ns:={ns}"]
    for k, v in params.items():
        cmd += ["-p", f"{k}:={v}"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(2)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def time_until(changed, timeout_s: float = 1.0) -> float:
    """Seconds until `changed()` holds, polled every 0.2 ms; nan on timeout."""
    t0 = time.perf_counter()
    while not changed():
        if time.perf_counter() - t0 > timeout_s:
            return float("nan")
        time.sleep(0.0002)
    return time.perf_counter() - t0


def percentiles(ms: list[float]) -> dict:
    a = np.asarray([m for m in ms if np.isfinite(m)])
    return {
        "p50": float(np.percentile(a, 50)),
        "p99": float(np.percentile(a, 99)),
        "n": int(a.size),
        "lost": len(ms) - int(a.size),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=150, help="commands timed per path (default 150)")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="bench_base_"))
    base = VirtualOmniBase(port=workdir / "lekiwi_base").start()
    arm = VirtualArm("so101", "follower", port=workdir / "so101_follower").start()
    calibration = arm.write_calibration(workdir / "follower.json")
    nodes = [
        start_node("lerobot_ros.nodes.base_node", "/bench_base", {"port": base.port, "fps": RATE_HZ}),
        start_node(
            "lerobot_ros.nodes.robot_node",
            "/bench_arm",
            {"robot.port": arm.port, "robot.calibration_file": calibration, "fps": RATE_HZ},
        ),
    ]
    ros = RosRuntime().start()
    try:
        probe = ros.create_node("bench_base_probe")
        odom_stamps: list[int] = []
        probe.create_subscription(
            Odometry, "/bench_base/odom", lambda m: odom_stamps.append(time_to_ns(m.header.stamp)), SENSOR_QOS
        )
        twist_pub = probe.create_publisher(Twist, "/bench_base/cmd_vel", RELIABLE_QOS)
        arm_pub = probe.create_publisher(Float64MultiArray, "/bench_arm/commands", RELIABLE_QOS)
        wait_until(
            lambda: (
                twist_pub.get_subscription_count() > 0
                and arm_pub.get_subscription_count() > 0
                and len(odom_stamps) > 10
            ),
            120,
            what="base_node and robot_node up",
        )
        pan = arm.servo("shoulder_pan")
        wheel = base.wheel("base_right_wheel")  # turns for a forward command (the back wheel does not)
        base_ms: list[float] = []
        arm_ms: list[float] = []
        speeds, pans = (0.05, 0.10), (0.1, -0.1)
        t_start, n_start = time.time_ns(), len(odom_stamps)
        for i in range(args.samples):
            time.sleep(random.uniform(0.02, 0.04))
            before = wheel.register("Goal_Velocity")
            msg = Twist()
            msg.linear.x = speeds[i % 2]
            twist_pub.publish(msg)
            base_ms.append(1e3 * time_until(lambda b=before: wheel.register("Goal_Velocity") != b))
            time.sleep(random.uniform(0.02, 0.04))
            before = pan.register("Goal_Position")
            goal = np.zeros(6)
            goal[0], goal[5] = pans[i % 2], 0.0
            arm_pub.publish(numpy_to_float64_multi_array(goal))
            arm_ms.append(1e3 * time_until(lambda b=before: pan.register("Goal_Position") != b))
        t_end = time.time_ns()
        window = [s for s in odom_stamps[n_start:] if t_start <= s <= t_end]
        rate = (len(window) - 1) / ((window[-1] - window[0]) / 1e9)
    finally:
        ros.close()
        for proc in nodes:
            stop(proc)
        base.close()
        arm.close()

    b, a = percentiles(base_ms), percentiles(arm_ms)
    figure = rate / RATE_HZ
    rows = [
        (
            "cmd_vel -> wheel goal (ms)",
            f"p50 {b['p50']:.1f}  p99 {b['p99']:.1f}",
            f"{b['n']} samples, {b['lost']} not seen in 1 s",
        ),
        (
            "commands -> joint goal (ms)",
            f"p50 {a['p50']:.1f}  p99 {a['p99']:.1f}",
            f"single arm, same run ({a['lost']} not seen)",
        ),
        ("base / arm latency p50", f"{b['p50'] / a['p50']:.2f}", "both loops at 50 Hz: half a tick is the floor"),
        ("base loop rate (Hz)", f"{rate:.2f}", f"odom over the run; goal >= {RATE_GOAL * RATE_HZ:.0f}"),
    ]
    print(f"\n{'what':<30}  {'figure':>22}  note")
    for name, value, note in rows:
        print(f"{name:<30}  {value:>22}  {note}")
    print(
        json.dumps(
            {
                "bench": "base",
                "figure": round(figure, 4),
                "goal": RATE_GOAL,
                "goal_op": ">=",
                "meets_goal": bool(figure >= RATE_GOAL),
                "base_loop_hz": round(rate, 2),
                "base_latency_ms_p50": round(b["p50"], 2),
                "base_latency_ms_p99": round(b["p99"], 2),
                "arm_latency_ms_p50": round(a["p50"], 2),
                "arm_latency_ms_p99": round(a["p99"], 2),
                "base_over_arm_p50": round(b["p50"] / a["p50"], 3),
                "samples": args.samples,
                "base_lost": b["lost"],
                "arm_lost": a["lost"],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
