"""Episode recorder under load: cameras 480x640 rgb8 at 30 Hz + joint states at 100 Hz from another process.

Goals: zero messages lost (published == recorded, per topic); recorder CPU below one core;
the recorder's write path no slower than the `rosbags` writer alone writing the same messages.
Figure: write-path time / rosbags-writer-alone time for the same (topic, stamp, size) sequence, measured in
this process right after the recording (goal <= 1.0); also reported: loss per topic and recorder CPU.
Default 10 s with 3 cameras; `--duration 60` is the issue's full run.

Also a message source for tests: `python bench/recorder.py publish --cams 2 --commands ...` publishes
reliable streams in timed phases and prints JSON events (ready / phase counts / done) on stdout.
Usage: python bench/recorder.py [--duration S] [--cams N] [--compression zstd]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")


# ---- the publisher (runs in its own process) ----------------------------------------------------
def camera_frames(cam: int, n: int = 4, h: int = 480, w: int = 640) -> list[np.ndarray]:
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 // w, y * 255 // h, ((x ^ y) + 40 * cam) & 255], axis=-1).astype(np.uint8)
    return [np.roll(base, 16 * i, axis=1) for i in range(n)]


def publish_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="recorder.py publish")
    parser.add_argument("--cams", type=int, default=2)
    parser.add_argument("--cam-hz", type=float, default=30.0)
    parser.add_argument("--joint-hz", type=float, default=100.0)
    parser.add_argument("--command-hz", type=float, default=0.0, help="0: no command stream")
    parser.add_argument("--phase-s", type=float, action="append", help="publishing phases (repeatable)")
    parser.add_argument("--pause-s", type=float, default=1.0, help="silence between phases")
    parser.add_argument("--wait-go", action="store_true", help="after 'ready', wait for a line on stdin")
    parser.add_argument("--ns", default="", help="topic prefix, e.g. /bench")
    args = parser.parse_args(argv)

    import rclpy
    from rclpy.duration import Duration
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import Image, JointState
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.codecs import numpy_to_float64_multi_array, numpy_to_image, numpy_to_joint_state

    def reliable(depth: int) -> QoSProfile:
        return QoSProfile(depth=depth, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)

    rclpy.init()
    node = rclpy.create_node("recorder_bench_publisher")
    streams = []  # [topic, publisher, period_s, make(k, stamp_ns)]
    pub = node.create_publisher(JointState, f"{args.ns}/joint_states", reliable(500))
    streams.append(
        [
            f"{args.ns}/joint_states",
            pub,
            1.0 / args.joint_hz,
            lambda k, t: numpy_to_joint_state(JOINTS, np.sin(0.01 * k + np.arange(6)), stamp_ns=t),
        ]
    )
    for cam in range(args.cams):
        frames = camera_frames(cam)
        topic = f"{args.ns}/cam{cam}/image_raw"
        pub = node.create_publisher(Image, topic, reliable(100))
        streams.append(
            [
                topic,
                pub,
                1.0 / args.cam_hz,
                lambda k, t, f=frames, c=cam: numpy_to_image(f[k % len(f)], "rgb8", t, f"cam{c}_optical_frame"),
            ]
        )
    if args.command_hz > 0:
        pub = node.create_publisher(Float64MultiArray, f"{args.ns}/commands", reliable(200))
        streams.append(
            [
                f"{args.ns}/commands",
                pub,
                1.0 / args.command_hz,
                lambda k, t: numpy_to_float64_multi_array(np.cos(0.01 * k + np.arange(6))),
            ]
        )

    def emit(**event) -> None:
        print(json.dumps(event), flush=True)

    deadline = time.monotonic() + 30.0
    while any(s[1].get_subscription_count() < 1 for s in streams):
        if time.monotonic() > deadline:
            emit(event="error", message="no subscriber matched within 30 s")
            sys.exit(1)
        time.sleep(0.05)
    emit(event="ready", topics=[s[0] for s in streams])
    if args.wait_go:
        sys.stdin.readline()
    counts = {s[0]: 0 for s in streams}
    for index, phase_s in enumerate(args.phase_s or [2.0]):
        start = time.monotonic()
        due = [start] * len(streams)
        while True:
            i = int(np.argmin(due))
            if due[i] >= start + phase_s:
                break
            delay = due[i] - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            topic, publisher, period, make = streams[i]
            publisher.publish(make(counts[topic], time.time_ns()))
            counts[topic] += 1
            due[i] += period
        emit(event="phase", index=index, counts=dict(counts))
        if index + 1 < len(args.phase_s or [2.0]):
            time.sleep(args.pause_s)
    for s in streams:
        s[1].wait_for_all_acked(Duration(seconds=10.0))
    emit(event="done", counts=counts)
    node.destroy_node()
    rclpy.try_shutdown()


# ---- the benchmark ---------------------------------------------------------------------------------
def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def read_events(proc, until: str, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"publisher exited before '{until}' (status {proc.poll()})")
        event = json.loads(line)
        if event["event"] == "error":
            raise RuntimeError(event["message"])
        if event["event"] == until:
            return event
    raise TimeoutError(f"no '{until}' event within {timeout:.0f} s")


def recorder_counts(diagnostics) -> dict[str, int]:
    """The latest per-topic counts in the recorder's /diagnostics."""
    latest: dict[str, int] = {}
    for array in diagnostics.messages[-20:]:
        for status in array.status:
            values = {kv.key: kv.value for kv in status.values}
            if status.name.startswith("episode_recorder: /") and "count" in values:
                latest[status.name.split(": ", 1)[1]] = int(values["count"])
    return latest


def wait_for_counts(diagnostics, published: dict[str, int], settle_s: float, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        counts = recorder_counts(diagnostics)
        if all(counts.get(t) == n for t, n in published.items()):
            return
        if counts != last:
            last, since = counts, time.monotonic()
        elif time.monotonic() - since > settle_s:
            return
        time.sleep(0.2)


def bag_counts(path: Path) -> dict[str, int]:
    from rosbags.rosbag2 import Reader

    with Reader(path) as reader:
        return {c.topic: c.msgcount for c in reader.connections}


def write_path_ratio(bag: Path, workdir: Path, compression: str | None) -> dict:
    """Write the recorded (topic, stamp, size) sequence with rosbags alone, then with our writer."""
    from rosbags.rosbag2 import Reader, StoragePlugin, Writer
    from rosbags.rosbag2.enums import CompressionFormat, CompressionMode

    from lerobot_ros.record.episode_bag_writer import EpisodeBagWriter, WriterSettings

    with Reader(bag) as reader:
        conns = {c.topic: c for c in reader.connections}
        sequence = [(c.topic, t, len(raw)) for c, t, raw in reader.messages()]
        payload = {}
        for c, _t, raw in reader.messages():
            payload.setdefault(c.topic, raw)
            if len(payload) == len(conns):
                break
    data = {topic: payload[topic] for topic in conns}
    total_bytes = sum(n for _, _, n in sequence)

    def rosbags_alone() -> float:
        t0 = time.perf_counter()
        writer = Writer(workdir / "rosbags_alone", version=9, storage_plugin=StoragePlugin.MCAP)
        if compression:
            writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
        writer.open()
        out = {t: writer.add_connection(t, c.msgtype, msgdef=c.msgdef.data, rihs01=c.digest) for t, c in conns.items()}
        for topic, stamp, _ in sequence:
            writer.write(out[topic], stamp, data[topic])
        writer.close()
        elapsed = time.perf_counter() - t0
        shutil.rmtree(workdir / "rosbags_alone")
        return elapsed

    def ours() -> tuple[float, float]:
        t0 = time.perf_counter()
        bag = EpisodeBagWriter(workdir / "ours", settings=WriterSettings(compression=compression or "none")).open()
        for topic, c in conns.items():
            bag.add_topic(topic, c.msgtype)
        for topic, stamp, _ in sequence:
            bag.write(topic, stamp, data[topic])
        producer = time.perf_counter() - t0
        result = bag.close()
        elapsed = time.perf_counter() - t0
        assert result.message_count == len(sequence), (result.counts, len(sequence))
        shutil.rmtree(workdir / "ours")
        return elapsed, producer

    # alternate, best of two each: page cache and disk state affect whichever runs first
    alone_runs, our_runs = [], []
    for _ in range(2):
        alone_runs.append(rosbags_alone())
        our_runs.append(ours())
    alone = min(alone_runs)
    mine, producer = min(our_runs)
    return {
        "messages": len(sequence),
        "mbytes": total_bytes / 1e6,
        "rosbags_alone_s": alone,
        "ours_s": mine,
        "ours_producer_s": producer,
        "ratio": mine / alone,
    }


def bench_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of publishing (issue: 60)")
    parser.add_argument("--cams", type=int, default=3)
    parser.add_argument("--compression", choices=["none", "zstd"], default="none")
    parser.add_argument("--keep", action="store_true", help="keep the recorded bag")
    args = parser.parse_args(argv)

    os.environ.setdefault("ROS_DOMAIN_ID", str(100 + os.getpid() % 100))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    from diagnostic_msgs.msg import DiagnosticArray

    from lerobot_ros.ros.runtime import MessageCollector, RosRuntime
    from lerobot_ros_msgs.srv import StartEpisode, StopEpisode

    workdir = Path(tempfile.mkdtemp(prefix="bench_recorder_"))
    ns = "/bench"
    topics = [f"{ns}/joint_states"] + [f"{ns}/cam{i}/image_raw" for i in range(args.cams)]
    recorder = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lerobot_ros.nodes.episode_recorder_node",
            "--ros-args",
            "-r",
            "__ns:=/bench",
            "-p",
            "topics:=[" + ",".join(topics) + "]",
            "-p",
            f"output_dir:={workdir / 'rec'}",
            "-p",
            f"compression:={args.compression}",
            "-p",
            "progress_period_s:=1.0",
        ],
        stderr=subprocess.DEVNULL,
    )
    publisher = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "publish",
            "--cams",
            str(args.cams),
            "--phase-s",
            str(args.duration),
            "--wait-go",
            "--ns",
            ns,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        with RosRuntime() as ros:
            node = ros.create_node("bench_client")
            diagnostics = MessageCollector(node, DiagnosticArray, "/diagnostics", 10)
            start = node.create_client(StartEpisode, f"{ns}/start_episode")
            stop = node.create_client(StopEpisode, f"{ns}/stop_episode")
            if not start.wait_for_service(timeout_sec=30):
                raise RuntimeError("recorder services did not appear")
            read_events(publisher, "ready", 60)
            time.sleep(1.0)  # let the recorder's discovery subscribe to every topic
            response = start.call(StartEpisode.Request(task="bench"))
            assert response.success, response.message
            cpu0, wall0 = cpu_seconds(recorder.pid), time.monotonic()
            publisher.stdin.write("go\n")
            publisher.stdin.flush()
            done = read_events(publisher, "done", args.duration + 120)
            # the publisher's messages are acknowledged by DDS; wait until the recorder's callbacks have
            # counted them all (its /diagnostics), or until its counts stop moving (then they were lost)
            wait_for_counts(diagnostics, done["counts"], settle_s=5.0, timeout_s=120.0)
            cpu1, wall1 = cpu_seconds(recorder.pid), time.monotonic()
            response = stop.call(StopEpisode.Request(outcome="success"))
            assert response.success, response.message
            bag = Path(response.bag_path)
    finally:
        publisher.kill()
        recorder.terminate()
        recorder.wait(timeout=30)
    published = done["counts"]
    recorded = bag_counts(bag)
    cores = (cpu1 - cpu0) / (wall1 - wall0)
    wp = write_path_ratio(bag, workdir, "zstd" if args.compression == "zstd" else None)
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"recorder bench: {args.cams} cameras 480x640 rgb8 @30 Hz + joint states @100 Hz, {args.duration:g} s")
    print(f"{'topic':28s} {'published':>10s} {'recorded':>10s} {'lost':>6s}")
    lost_total = 0
    for topic, n in published.items():
        got = recorded.get(topic, 0)
        lost_total += n - got
        print(f"{topic:28s} {n:10d} {got:10d} {n - got:6d}")
    print(f"recorder CPU: {cores:.2f} cores (goal < 1.0)")
    print(
        f"write path: ours {wp['ours_s']:.2f} s (producer side {wp['ours_producer_s']:.2f} s) vs rosbags alone "
        f"{wp['rosbags_alone_s']:.2f} s for {wp['messages']} messages / {wp['mbytes']:.0f} MB -> ratio {wp['ratio']:.2f}"
    )
    meets = lost_total == 0 and cores < 1.0 and wp["ratio"] <= 1.0
    print(
        json.dumps(
            {
                "bench": "recorder",
                "figure": round(wp["ratio"], 3),
                "goal": 1.0,
                "goal_op": "<=",
                "meets_goal": meets,
                "duration_s": args.duration,
                "cams": args.cams,
                "compression": args.compression,
                "lost": lost_total,
                "published": published,
                "recorded": recorded,
                "recorder_cpu_cores": round(cores, 3),
                "rosbags_alone_s": round(wp["rosbags_alone_s"], 3),
                "ours_s": round(wp["ours_s"], 3),
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "publish":
        publish_main(sys.argv[2:])
    else:
        bench_main(sys.argv[1:])
