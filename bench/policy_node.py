"""Benchmark: observation -> action latency through policy_node vs the same policy called directly.

Set-up: a small random ACT (2 cameras 480x640 rgb8 + 6-D joint state), saved and loaded like a trained one.
1. Sync: `policy_node` runs in its own process and ticks when the joint state arrives (tick_on); this
   process publishes both images and the joint state, then waits for the action (lockstep). ROS latency =
   joint-state publish -> action received here. Direct = lerobot-record's predict_action on the same frames,
   same policy, in this process, same run. Reported: ROS - direct at p50/p99 of each distribution, and per
   tick ROS latency - the node's own predict time for that same tick (it removes the policy's run-to-run
   variation, which on a shared CPU is larger than the overhead being measured).
   Also measured, same run, same publishing, tick by tick between the node's (so both see the same machine):
   the rclpy floor, a do-nothing rclpy node in its own process with the same image subscriptions answering
   each joint state on its own topic at once (what any rclpy node pays here).
2. Async: the node ticks on its timer at the contract's fps while observations stream in; inference is
   slower than one tick. Reported: the slowest tick callback vs the period, missed and dry ticks.

Last line: one JSON object. figure = what the node adds per tick above the rclpy floor, p50 in ms (issue 30's goal:
<= 0.3 p50, <= 2 p99); meets_goal also needs the async run to keep its period. The earlier absolute goal (ROS -
node compute <= 2 ms p50, <= 5 p99) is reported beside it (`absolute_*`) but no longer decides: it includes the
round trip any rclpy node pays on the machine, 0.9-2.4 ms p50 on this 2-core VM from one day to the next, so it
measured the day more than the node.
"""

from __future__ import annotations

import argparse
import json
import os
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

H, W = 480, 640
GOAL_ABOVE_FLOOR_P50_MS, GOAL_ABOVE_FLOOR_P99_MS = 0.3, 2.0  # issue 30: what the node adds to any rclpy node
GOAL_ABSOLUTE_P50_MS, GOAL_ABSOLUTE_P99_MS = 2.0, 5.0  # the earlier goal, DDS included: reported, not deciding
JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")

CONTRACT = """
version: 1
robot_type: so101_follower
fps: {fps}
features:
  action:
    topic: /bench/follower/commands
    type: std_msgs/msg/Float64MultiArray
    qos: reliable
    names: [shoulder_pan.pos, shoulder_lift.pos, elbow_flex.pos, wrist_flex.pos, wrist_roll.pos, gripper.pos]
    transforms: [rad2deg]
    timeline: receive
  observation.state:
    topic: /bench/follower/joint_states
    type: sensor_msgs/msg/JointState
    qos: reliable
    joints: [shoulder_pan, shoulder_lift, elbow_flex, wrist_flex, wrist_roll, gripper]
    transforms: [rad2deg]
    timeline: header
    alignment: {{policy: hold}}
  observation.images.front:
    topic: /bench/front/image_raw
    type: sensor_msgs/msg/Image
    qos: reliable
    shape: [{h}, {w}, 3]
    timeline: header
    alignment: {{policy: hold}}
  observation.images.wrist:
    topic: /bench/wrist/image_raw
    type: sensor_msgs/msg/Image
    qos: reliable
    shape: [{h}, {w}, 3]
    timeline: header
    alignment: {{policy: hold}}
"""


ECHO_STATE, ECHO_COMMANDS = "/bench/echo/joint_states", "/bench/echo/commands"  # the floor's own state/command pair


def pct(values, q):
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def camera_like(rng, n):
    """Smooth gradients with a little noise (camera-like content), uint8 HWC."""
    base = (
        np.linspace(0, 200, W, dtype=np.float32)[None, :, None] + np.linspace(0, 50, H, dtype=np.float32)[:, None, None]
    )
    return [np.clip(base + rng.normal(0, 8, (H, W, 3)), 0, 255).astype(np.uint8) for _ in range(n)]


def observation_publishers(node) -> dict:
    """This process stands in for the robot and camera nodes: the joint state and both cameras' topics."""
    from sensor_msgs.msg import Image, JointState

    from lerobot_ros.ros.qos import RELIABLE_QOS

    return {
        "state": node.create_publisher(JointState, "/bench/follower/joint_states", RELIABLE_QOS),
        "front": node.create_publisher(Image, "/bench/front/image_raw", RELIABLE_QOS),
        "wrist": node.create_publisher(Image, "/bench/wrist/image_raw", RELIABLE_QOS),
    }


def publish_images(pubs, images, i: int, stamp: int) -> None:
    from lerobot_ros.codecs import numpy_to_image

    pubs["front"].publish(numpy_to_image(images[i % len(images)], "rgb8", stamp))
    pubs["wrist"].publish(numpy_to_image(images[(i + 1) % len(images)], "rgb8", stamp))


def start_node(policy_dir, contract, extra, env):
    exe = Path(sys.executable).parent / "policy_node"
    cmd = [
        str(exe),
        "--ros-args",
        "-p",
        f"policy.path:={policy_dir}",
        "-p",
        f"contract:={contract}",
        "-p",
        "policy.device:=cpu",
        "-p",
        "seed:=0",
    ]
    for k, v in extra.items():
        cmd += ["-p", f"{k}:={v}"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def stop_node(proc):
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def direct_latencies(policy_dir, frames):
    import torch
    from lerobot.common.control_utils import predict_action

    from lerobot_ros.policy import load_policy

    lp = load_policy(str(policy_dir), "cpu")
    lp.policy.reset()
    torch.manual_seed(0)
    out = []
    for f in frames:
        t = time.perf_counter()
        predict_action(
            dict(f), lp.policy, torch.device("cpu"), lp.preprocessor, lp.postprocessor, False, "", "so101_follower"
        )
        out.append((time.perf_counter() - t) * 1e3)
    return out


def run_sync(ros, policy_dir, contract, ticks, joints, images, env):
    """Per cycle: the node's tick (images, 20 ms, joint state -> action), then the echo node's round trip."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray, String

    from lerobot_ros.codecs import numpy_to_joint_state
    from lerobot_ros.ros.qos import RELIABLE_QOS
    from lerobot_ros.ros.runtime import wait_until

    node = ros.create_node("bench_sync_probe")
    pubs = observation_publishers(node)
    ticked = threading.Event()
    received = []
    infos = []
    node.create_subscription(
        Float64MultiArray,
        "/bench/follower/commands",
        lambda m: received.append((time.perf_counter(), time.time_ns())),
        RELIABLE_QOS,
    )
    node.create_subscription(
        String, "/policy_node/tick_info", lambda m: (infos.append(json.loads(m.data)), ticked.set()), RELIABLE_QOS
    )
    echo_pub = node.create_publisher(JointState, ECHO_STATE, RELIABLE_QOS)
    echoed = []
    echo_got = threading.Event()
    node.create_subscription(
        Float64MultiArray, ECHO_COMMANDS, lambda m: (echoed.append(time.perf_counter()), echo_got.set()), RELIABLE_QOS
    )
    proc = start_node(policy_dir, contract, {"tick_on": "observation.state", "max_age_ms": 0.0}, env)
    echo = subprocess.Popen(
        [sys.executable, __file__, "--echo"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_until(
            lambda: (
                all(p.get_subscription_count() >= 2 for p in pubs.values() if p is not pubs["state"])
                and pubs["state"].get_subscription_count()
                and echo_pub.get_subscription_count()
            ),
            90,
            what="policy_node and echo node subscriptions",
        )
        latencies, floor = [], []
        warmup = 5
        for k in range(ticks + warmup):
            i = k % len(joints)
            stamp = time.time_ns()
            js = numpy_to_joint_state(JOINTS, position=joints[i], stamp_ns=stamp)
            publish_images(pubs, images, i, stamp)
            time.sleep(
                0.02
            )  # images first and processed (as cameras would have delivered them), then the tick's joint state
            ticked.clear()
            n_actions = len(received)
            t0, t0_wall = time.perf_counter(), time.time_ns()
            pubs["state"].publish(js)
            # the first ticks: the node may not have matched this process's (best-effort) image publishers yet when
            # the first frames go out, and a tick needs every feature: offer the observation again until it ticks
            deadline = time.monotonic() + 60
            while not ticked.wait(1.0 if k < warmup else 60):
                if k >= warmup or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"policy_node did not tick ({proc.poll()=}); stderr: "
                        f"{proc.stderr.read() if proc.poll() is not None else ''}"
                    )
                stamp = time.time_ns()
                js = numpy_to_joint_state(JOINTS, position=joints[i], stamp_ns=stamp)
                publish_images(pubs, images, i, stamp)
                time.sleep(0.02)
                t0, t0_wall = time.perf_counter(), time.time_ns()
                pubs["state"].publish(js)
            wait_until(
                lambda: (
                    len(received) > n_actions  # noqa: B023 - called at once
                    or not infos[-1]["published"]
                ),
                5,
                what="action",
            )
            if k >= warmup:
                if not infos[-1]["published"]:
                    raise RuntimeError(f"tick {k} published nothing: {infos[-1]}")
                info = infos[-1]
                # wall-clock split (one machine, one clock): publish -> node callback, callback -> action publish,
                # action publish -> received here
                split = (
                    (info["received_wall_ns"] - t0_wall) / 1e6,
                    (info["published_wall_ns"] - info["received_wall_ns"]) / 1e6,
                    (received[-1][1] - info["published_wall_ns"]) / 1e6,
                )
                latencies.append(((received[-1][0] - t0) * 1e3, info["inference_ms"], info["tick_ms"], split))
            # the floor's round trip in the same cycle, published the same way: images, 20 ms, then the state
            publish_images(pubs, images, i, time.time_ns())
            time.sleep(0.02)
            echo_got.clear()
            t0 = time.perf_counter()
            echo_pub.publish(js)
            deadline = time.monotonic() + 60
            while not echo_got.wait(1.0 if k < warmup else 10):  # its reply publisher may match late: ask again
                if k >= warmup or time.monotonic() > deadline:
                    raise RuntimeError(f"echo node did not answer ({echo.poll()=})")
                t0 = time.perf_counter()
                echo_pub.publish(js)
            if k >= warmup:
                floor.append((echoed[-1] - t0) * 1e3)
        return latencies, floor
    finally:
        stop_node(proc)
        stop_node(echo)
        node.destroy_node()


def echo_main() -> int:
    """The floor: a do-nothing rclpy node with the policy node's subscriptions that answers each joint
    state with a 6-value command at once (no policy, no frame assembly): what any rclpy node pays here."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from sensor_msgs.msg import Image, JointState
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.ros.qos import RELIABLE_QOS

    rclpy.init()
    node = rclpy.create_node("bench_echo")
    pub = node.create_publisher(Float64MultiArray, ECHO_COMMANDS, RELIABLE_QOS)
    reply = Float64MultiArray(data=[0.0] * 6)
    node.create_subscription(JointState, ECHO_STATE, lambda m: pub.publish(reply), RELIABLE_QOS)
    for cam in ("front", "wrist"):
        node.create_subscription(Image, f"/bench/{cam}/image_raw", lambda m: None, RELIABLE_QOS)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    return 0


def run_async(ros, policy_dir, contract, seconds, fps, joints, images, env):
    from std_msgs.msg import String

    from lerobot_ros.codecs import numpy_to_joint_state
    from lerobot_ros.ros.qos import RELIABLE_QOS
    from lerobot_ros.ros.runtime import wait_until

    node = ros.create_node("bench_async_probe")
    pubs = observation_publishers(node)
    infos = []
    node.create_subscription(
        String,
        "/policy_node/tick_info",
        lambda m: infos.append((time.perf_counter(), json.loads(m.data))),
        RELIABLE_QOS,
    )
    proc = start_node(
        policy_dir, contract, {"async_inference": True, "chunk_threshold": 0.5, "max_age_ms": 1000.0}, env
    )
    try:
        wait_until(lambda: all(p.get_subscription_count() for p in pubs.values()), 90, what="policy_node subscriptions")
        period = 1.0 / fps
        start = time.perf_counter()
        k = 0
        first_ok = None
        while True:
            now = time.perf_counter()
            if first_ok is None and any(i["status"] == "ok" for _, i in infos):
                first_ok = now
                infos.clear()  # measure from the first executed chunk on
            if first_ok is not None and now - first_ok >= seconds:
                break
            if now - start > seconds + 120:
                raise RuntimeError("async: no chunk within 120 s")
            stamp = time.time_ns()
            i = k % len(joints)
            publish_images(pubs, images, i, stamp)
            pubs["state"].publish(numpy_to_joint_state(JOINTS, position=joints[i], stamp_ns=stamp))
            k += 1
            time.sleep(max(0.0, start + k * period - time.perf_counter()))
        time.sleep(0.5)
    finally:
        stop_node(proc)
        node.destroy_node()
    return infos


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ticks", type=int, default=100, help="measured sync ticks (default 100)")
    ap.add_argument("--async-seconds", type=float, default=10.0, help="duration of the async run")
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--chunk", type=int, default=20, help="ACT chunk_size = n_action_steps (sync part)")
    ap.add_argument(
        "--async-chunk", type=int, default=100, help="ACT chunk_size for the async part (covers its latency)"
    )
    ap.add_argument(
        "--node-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra environment for the policy_node process (e.g. OMP_WAIT_POLICY=PASSIVE); repeatable",
    )
    ap.add_argument("--echo", action="store_true", help=argparse.SUPPRESS)  # the floor's echo node (internal)
    args = ap.parse_args()
    if args.echo:
        return echo_main()

    from lerobot_ros.ros.runtime import RosRuntime
    from lerobot_ros.testing.policies import make_policy_folder

    tmp = Path(tempfile.mkdtemp(prefix="bench_policy_"))
    policy_dir = make_policy_folder(
        tmp / "act", "act", cameras={"front": (H, W), "wrist": (H, W)}, chunk_size=args.chunk, n_action_steps=args.chunk
    )
    async_dir = make_policy_folder(
        tmp / "act_async",
        "act",
        cameras={"front": (H, W), "wrist": (H, W)},
        chunk_size=args.async_chunk,
        n_action_steps=args.async_chunk,
    )
    contract = tmp / "bench.yaml"
    contract.write_text(CONTRACT.format(fps=args.fps, h=H, w=W))
    rng = np.random.default_rng(0)
    images = camera_like(rng, 16)
    joints = np.cumsum(rng.normal(scale=0.02, size=(16, 6)), axis=0)
    # This process stands in for camera_node / the sim bridge, which publish frames with the large-data
    # Fast DDS profile (shared memory big enough for a frame): do the same, or the frames crawl over
    # fragmented UDP loopback and their reassembly competes with the tick being measured.
    from lerobot_ros.ros.dds import use_large_data_profile

    use_large_data_profile()
    env = dict(os.environ)
    env.update(kv.split("=", 1) for kv in args.node_env)

    with RosRuntime() as ros:
        pairs, floor_ms = run_sync(ros, policy_dir, contract, args.ticks, joints, images, env)
        ros_ms = [a for a, _, _, _ in pairs]
        paired_ms = [a - b for a, b, _, _ in pairs]
        node_side_ms = [c - b for _, b, c, _ in pairs]  # the node's own work per tick besides the policy call
        dds_in_ms = [sp[0] for *_, sp in pairs]
        dds_out_ms = [sp[2] for *_, sp in pairs]
        to_publish_ms = [sp[1] - b for _, b, _, sp in pairs]  # callback -> action publish, less the policy call
        frames = [
            {
                "observation.state": np.rad2deg(joints[k % len(joints)]).astype(np.float32),
                "observation.images.front": images[k % len(joints) % len(images)],
                "observation.images.wrist": images[(k % len(joints) + 1) % len(images)],
            }
            for k in range(5, 5 + args.ticks)
        ]
        direct_ms = direct_latencies(policy_dir, frames)
        infos = run_async(ros, async_dir, contract, args.async_seconds, args.fps, joints, images, env)

    over50 = pct(ros_ms, 50) - pct(direct_ms, 50)
    over99 = pct(ros_ms, 99) - pct(direct_ms, 99)
    ticks = [i for _, i in infos]
    live = [i for i in ticks if i["status"] != "stopped"]
    tick_ms = [i["tick_ms"] for i in live]
    period_ms = 1e3 / args.fps
    stamps = np.array([i["t_ns"] for i in live], dtype=np.int64)
    gaps_ms = np.diff(stamps) / 1e6 if stamps.size > 1 else np.zeros(0)
    missed = int(np.sum(np.maximum(0, np.round(gaps_ms / period_ms) - 1))) if gaps_ms.size else 0
    dry = sum(1 for i in live if i["dry"])
    ok = sum(1 for i in live if i["status"] == "ok")
    # inference latency of the async run: time between a submitting tick and the first tick with a new plan is
    # not observable here; use the sync run's inference ticks (p99 of direct) as the inference time
    inference_ms = pct(direct_ms, 100 * (1 - 1 / args.chunk)) if direct_ms else 0.0

    print(f"\npolicy_node benchmark: small ACT, 2 cameras {W}x{H} rgb8 + 6-D state, chunk {args.chunk}, CPU")
    print(f"{'':28}{'p50 ms':>10}{'p99 ms':>10}")
    print(f"{'through ROS (node process)':28}{pct(ros_ms, 50):10.2f}{pct(ros_ms, 99):10.2f}")
    print(f"{'direct predict_action':28}{pct(direct_ms, 50):10.2f}{pct(direct_ms, 99):10.2f}")
    chunk_inference = [b for _, b, _, _ in pairs if b > 1.0]  # ticks that ran the model (the others pop the queue)
    print(
        f"{'node inference (chunk ticks)':28}{pct(chunk_inference, 50) if chunk_inference else 0:10.2f}{pct(chunk_inference, 99) if chunk_inference else 0:10.2f}   ({len(chunk_inference)} ticks ran the model)"
    )
    print(f"{'ROS - direct (percentiles)':28}{over50:10.2f}{over99:10.2f}")
    print(
        f"{'per tick: ROS - node compute':28}{pct(paired_ms, 50):10.2f}{pct(paired_ms, 99):10.2f}   (same tick, inference measured in the node; earlier goal <= 2 / <= 5, DDS included)"
    )
    print(
        f"{'  of which inside the node':28}{pct(node_side_ms, 50):10.2f}{pct(node_side_ms, 99):10.2f}   (frame assembly, safety, encode, publish)"
    )
    print(
        f"{'  of which DDS + scheduling':28}{pct(paired_ms, 50) - pct(node_side_ms, 50):10.2f}{'':>10}   (machine load: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print(
        f"{'  DDS in: publish -> callback':28}{pct(dds_in_ms, 50):10.2f}{pct(dds_in_ms, 99):10.2f}   (joint state reaches the node's callback)"
    )
    print(
        f"{'  node: callback -> publish':28}{pct(to_publish_ms, 50):10.2f}{pct(to_publish_ms, 99):10.2f}   (decode, frame, safety, encode; the policy call excluded)"
    )
    print(
        f"{'  DDS out: action -> here':28}{pct(dds_out_ms, 50):10.2f}{pct(dds_out_ms, 99):10.2f}   (the node's clock after its publish "
        "call -> this process's callback; < 0 when this process, woken on the node's core, ran first)"
    )
    print(
        f"{'rclpy floor: echo round trip':28}{pct(floor_ms, 50):10.2f}{pct(floor_ms, 99):10.2f}   (a do-nothing rclpy node, same topics and publishing; no policy)"
    )
    print(
        f"{'per tick above the floor':28}{pct(paired_ms, 50) - pct(floor_ms, 50):10.2f}{pct(paired_ms, 99) - pct(floor_ms, 99):10.2f}   (what policy_node adds to any rclpy node's round trip: the figure, goal <= 0.3 / <= 2)"
    )
    print(
        "(per tick: the inference time of the very tick is subtracted, so the policy's own run-to-run variation "
        "does not count as ROS overhead)"
    )
    print(
        f"\nasync (chunk {args.async_chunk}) at {args.fps} Hz (period {period_ms:.1f} ms) for {args.async_seconds:.0f} s: {len(live)} ticks, {ok} acted, "
        f"{dry} dry, {missed} missed; tick callback p50 {pct(tick_ms, 50) if tick_ms else 0:.2f} ms, "
        f"max {max(tick_ms) if tick_ms else 0:.2f} ms; inference (chunk ticks) ~{inference_ms:.0f} ms"
    )
    async_ok = bool(tick_ms) and max(tick_ms) < period_ms and missed == 0
    above50, above99 = pct(paired_ms, 50) - pct(floor_ms, 50), pct(paired_ms, 99) - pct(floor_ms, 99)
    above_ok = above50 <= GOAL_ABOVE_FLOOR_P50_MS and above99 <= GOAL_ABOVE_FLOOR_P99_MS
    result = {
        "bench": "policy_node",
        "figure": round(above50, 3),
        "goal": GOAL_ABOVE_FLOOR_P50_MS,
        "goal_op": "<=",
        "meets_goal": bool(above_ok and async_ok),
        "absolute_goal_p50_ms": GOAL_ABSOLUTE_P50_MS,
        "absolute_goal_p99_ms": GOAL_ABSOLUTE_P99_MS,
        "absolute_meets_goal": bool(
            pct(paired_ms, 50) <= GOAL_ABSOLUTE_P50_MS and pct(paired_ms, 99) <= GOAL_ABSOLUTE_P99_MS
        ),
        "overhead_p50_ms": round(over50, 3),
        "paired_overhead_p50_ms": round(pct(paired_ms, 50), 3),
        "paired_overhead_p99_ms": round(pct(paired_ms, 99), 3),
        "node_side_p50_ms": round(pct(node_side_ms, 50), 3),
        "node_side_p99_ms": round(pct(node_side_ms, 99), 3),
        "dds_in_p50_ms": round(pct(dds_in_ms, 50), 3),
        "rclpy_floor_p50_ms": round(pct(floor_ms, 50), 3),
        "node_inference_p50_ms": round(pct(chunk_inference, 50), 3) if chunk_inference else None,
        "rclpy_floor_p99_ms": round(pct(floor_ms, 99), 3),
        "above_floor_p50_ms": round(above50, 3),
        "above_floor_p99_ms": round(above99, 3),
        "above_floor_goal_p50_ms": GOAL_ABOVE_FLOOR_P50_MS,
        "above_floor_goal_p99_ms": GOAL_ABOVE_FLOOR_P99_MS,
        "above_floor_meets_goal": bool(above_ok),
        "dds_out_p50_ms": round(pct(dds_out_ms, 50), 3),
        "dds_out_p99_ms": round(pct(dds_out_ms, 99), 3),
        "dds_in_p99_ms": round(pct(dds_in_ms, 99), 3),
        "node_to_publish_p50_ms": round(pct(to_publish_ms, 50), 3),
        "node_to_publish_p99_ms": round(pct(to_publish_ms, 99), 3),
        "load_avg": round(os.getloadavg()[0], 2),
        "overhead_p99_ms": round(over99, 3),
        "ros_p50_ms": round(pct(ros_ms, 50), 3),
        "ros_p99_ms": round(pct(ros_ms, 99), 3),
        "direct_p50_ms": round(pct(direct_ms, 50), 3),
        "direct_p99_ms": round(pct(direct_ms, 99), 3),
        "async_ticks": len(live),
        "async_missed_ticks": missed,
        "async_dry_ticks": dry,
        "async_tick_max_ms": round(max(tick_ms), 3) if tick_ms else None,
        "async_period_ms": round(period_ms, 3),
        "inference_ms": round(inference_ms, 1),
        "async_meets_goal": async_ok,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
