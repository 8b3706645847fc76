"""Test fixture: synthetic SO-101-style recordings (joint states, commands, cameras) for tests and benchmarks.

Part of `lerobot_ros.testing` (the test suite's and the benchmarks' support code, not used by the product).

Values follow known functions of time, so a converted dataset can be checked value by value.
Camera frames look like a camera's (smooth background, a moving object, mild sensor noise), which
matters for encoder speed: pure noise encodes far slower than real footage.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from lerobot_ros.bag.writer import BagWriter
from lerobot_ros.codecs import numpy_to_compressed, numpy_to_float64_multi_array, numpy_to_image, numpy_to_joint_state
from lerobot_ros.conventions.joints import SO101_JOINTS

JOINTS = list(SO101_JOINTS)
T0 = 1_700_000_000_000_000_000


def joint_positions(t_s: np.ndarray | float) -> np.ndarray:
    """Radians of the six joints at time t (a smooth motion inside the joints' ranges)."""
    t = np.asarray(t_s, dtype=np.float64)[..., None]
    k = np.arange(6)
    return 0.6 * np.sin(0.5 * t * (1 + 0.2 * k) + k)


def camera_frame(i: int, height: int, width: int, seed: int = 0) -> np.ndarray:
    """A camera-like RGB frame: gradient background, a moving square, mild noise."""
    y = np.linspace(0, 1, height, dtype=np.float32)[:, None]
    x = np.linspace(0, 1, width, dtype=np.float32)[None, :]
    img = np.empty((height, width, 3), np.float32)
    img[..., 0] = 90 + 80 * x
    img[..., 1] = 70 + 90 * y
    img[..., 2] = 120 + 40 * (x * y)
    size = max(4, height // 6)
    cy = int((height - size) * (0.5 + 0.4 * np.sin(i / 20 + seed)))
    cx = int((width - size) * (0.5 + 0.4 * np.cos(i / 25 + seed)))
    img[cy : cy + size, cx : cx + size] = (220, 40, 40)
    noise = np.random.default_rng(i * 7 + seed).normal(0, 3, (height, width, 1)).astype(np.float32)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


def so101_messages(
    seconds: float,
    cameras: dict[str, tuple[int, int]] | None = None,
    state_hz: float = 100.0,
    command_hz: float = 30.0,
    camera_hz: float = 30.0,
    compressed: bool = True,
    encoding: str = "rgb8",
    namespace: str = "/follower",
    camera_topic: str = "/{cam}/image_raw",
    task: str | None = None,
    t0: int = T0,
) -> Iterator[tuple[str, str, int, object]]:
    """(topic, msgtype, log_time_ns, rclpy message) in log-time order, on so101.yaml's topics by default."""
    cameras = {"front": (48, 64)} if cameras is None else cameras
    events: list[tuple[int, int, str, int]] = []  # (t, order, kind, index)
    for kind, hz, order in (("state", state_hz, 0), ("command", command_hz, 1), ("camera", camera_hz, 2)):
        if hz <= 0:
            continue
        n = int(np.floor(seconds * hz)) + 1
        for i in range(n):
            events.append((t0 + int(round(i * 1e9 / hz)), order, kind, i))
    events.sort()
    if task is not None:
        from std_msgs.msg import String

        yield "/task", "std_msgs/msg/String", t0, String(data=task)
    for t, _order, kind, i in events:
        ts = (t - t0) / 1e9
        if kind == "state":
            msg = numpy_to_joint_state(JOINTS, position=joint_positions(ts), stamp_ns=t)
            yield f"{namespace}/joint_states", "sensor_msgs/msg/JointState", t + 200_000, msg
        elif kind == "command":
            yield (
                f"{namespace}/commands",
                "std_msgs/msg/Float64MultiArray",
                t,
                numpy_to_float64_multi_array(joint_positions(ts + 0.05)),
            )
        else:
            for c, (cam, (h, w)) in enumerate(cameras.items()):
                pixels = camera_frame(i, h, w, seed=c)
                topic = camera_topic.format(cam=cam)
                if compressed:
                    yield (
                        topic + "/compressed",
                        "sensor_msgs/msg/CompressedImage",
                        t + 1_000_000,
                        numpy_to_compressed(pixels, encoding, "jpeg", 90, stamp_ns=t),
                    )
                else:
                    yield (
                        topic,
                        "sensor_msgs/msg/Image",
                        t + 1_000_000,
                        numpy_to_image(
                            pixels if encoding == "rgb8" else np.ascontiguousarray(pixels[..., ::-1]),
                            encoding,
                            stamp_ns=t,
                        ),
                    )


def write_so101_bag(
    path,
    seconds: float = 2.0,
    storage: str = "mcap",
    version: int = 9,
    compression: str | None = None,
    custom_data: dict | None = None,
    **kwargs,
) -> Path:
    """A bag on so101.yaml's topics (see so101_messages for options)."""
    qos = {"/follower/commands": "reliable"}
    with BagWriter(path, storage, version, compression, custom_data) as writer:
        for topic, msgtype, t, msg in so101_messages(seconds, **kwargs):
            writer.add_topic(topic, msgtype, qos.get(topic, "sensor"))
            writer.write(topic, t, msg)
    return Path(path)


def write_sim_bag(path, seconds: float = 1.0, cameras=None, chunks: int = 3) -> Path:
    """An so101_sim-contract episode as the recorder would hold it, plus a policy's chunks and /diagnostics."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from std_msgs.msg import String

    from lerobot_ros.bag import BagWriter
    from lerobot_ros.codecs import chunk_to_joint_trajectory, ns_to_time
    from lerobot_ros.contract.loader import resolve
    from lerobot_ros_msgs.msg import EpisodeStatus

    contract_text = resolve("so101_sim").read_text()
    with BagWriter(path, custom_data={"contract": contract_text, "task": "Pick up the cube"}) as w:

        def put(topic, msgtype, t, msg, qos="reliable"):
            w.add_topic(topic, msgtype, qos)
            w.write(topic, t, msg)

        put("/sim/task", "std_msgs/msg/String", T0, String(data="Pick up the cube"))
        for topic, msgtype, t, msg in so101_messages(
            seconds,
            cameras=cameras or {"front": (48, 64)},
            compressed=False,
            namespace="/sim",
            camera_topic="/sim/{cam}/image_raw",
        ):
            put(topic, msgtype, t, msg, "sensor")
        for k in range(chunks):
            t = T0 + int(k * seconds / chunks * 1e9)
            future = joint_positions(np.arange(1, 11) / 30.0 + k * seconds / chunks)
            put(
                "/policy/predicted_chunk",
                "trajectory_msgs/msg/JointTrajectory",
                t + 1,
                chunk_to_joint_trajectory(list(SO101_JOINTS), future, 30.0, stamp_ns=t),
            )
        for k, level in enumerate([0, 1, 0]):
            t = T0 + int(k * seconds / 3 * 1e9) + 2
            status = DiagnosticStatus(level=bytes([level]), name="sim_bridge: so101", message="late" if level else "ok")
            put("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray", t, DiagnosticArray(status=[status]))
        for step, done in ((0, False), (29, True)):
            t = T0 + int(step / 30 * 1e9) + 3
            msg = EpisodeStatus(episode_index=0, step=step, done=done, success=done, task="Pick up the cube")
            msg.header.stamp = ns_to_time(t)
            put("/sim/episode_status", "lerobot_ros_msgs/msg/EpisodeStatus", t, msg)
    return Path(path)
