"""The live feed: ROS callbacks hand over messages without ever waiting; one worker thread logs them.

Why a worker: decoding and logging a camera frame costs milliseconds, a ROS callback must not. Each camera
has a latest-only slot (a newer frame replaces one not yet shown: that is the subsampling when the viewer
falls behind) and a display rate cap (`max_image_hz`); vectors are queued and sent in batches.
Nothing here imports rclpy: tests feed it directly.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from lerobot_ros.viewer.log import EpisodeInfo, ViewerLog
from lerobot_ros.viewer.robot import RobotGeometry


class LatestSlots:
    """Newest item per key; `put` never blocks, and replacing an item not yet taken counts as a drop."""

    def __init__(self):
        self._lock = threading.Lock()
        self._items: dict = {}
        self.offered: collections.Counter = collections.Counter()
        self.dropped: collections.Counter = collections.Counter()

    def put(self, key, item) -> None:
        with self._lock:
            if key in self._items:
                self.dropped[key] += 1
            self._items[key] = item
            self.offered[key] += 1

    def take(self) -> dict:
        with self._lock:
            items, self._items = self._items, {}
        return items


class RateGate:
    """At most about `max_hz` items per key, by the items' own times (0: no cap). A tenth of a period of
    slack, so a 30 fps camera with arrival jitter gives every third frame at 10 Hz, not every fourth."""

    def __init__(self, max_hz: float):
        self.period_ns = int(0.9e9 / max_hz) if max_hz > 0 else 0
        self._last: dict = {}

    def allow(self, key, t_ns: int) -> bool:
        last = self._last.get(key)
        if last is not None and 0 <= t_ns - last < self.period_ns:
            return False
        self._last[key] = t_ns
        return True


@dataclass
class FeedStats:
    images_offered: dict = field(default_factory=dict)
    images_dropped: dict = field(default_factory=dict)  # replaced before the worker took them
    images_skipped: dict = field(default_factory=dict)  # over the display rate cap
    images_shown: dict = field(default_factory=dict)
    images_bad: dict = field(default_factory=dict)  # could not be decoded (a corrupt jpeg, an unknown encoding)
    vectors: int = 0
    chunks: int = 0


class LiveFeed:
    """`decode_image(feature, payload) -> (H, W, 3) uint8` runs in the worker, only for frames that are shown."""

    def __init__(
        self,
        log: ViewerLog,
        decode_image: Callable[[str, object], np.ndarray],
        robot: RobotGeometry | None = None,
        state_joints: Sequence[str] = (),
        max_image_hz: float = 10.0,
        flush_period_s: float = 0.1,
        pose_hz: float = 10.0,
    ):
        self.log, self.decode_image, self.robot = log, decode_image, robot
        self.state_joints = list(state_joints)
        self.flush_period_s = flush_period_s
        self.images = LatestSlots()
        self.gate = RateGate(max_image_hz)
        self.pose_gate = RateGate(pose_hz)
        self._vectors: dict[str, collections.deque[tuple[int, np.ndarray]]] = {
            "state": collections.deque(maxlen=100_000),
            "action": collections.deque(maxlen=100_000),
        }
        self._events: collections.deque = collections.deque(maxlen=10_000)
        self._chunk = LatestSlots()
        self._ros_state: tuple[int, np.ndarray] | None = None
        self.stats = FeedStats()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: str | None = None

    # -- producers (ROS callbacks) ------------------------------------------------------------------
    def offer_image(self, feature: str, t_ns: int, payload) -> None:
        self.images.put(feature, (t_ns, payload))

    def offer_vector(self, kind: str, t_ns: int, values, ros_values=None) -> None:
        """`values` in LeRobot units; for the state, `ros_values` (ROS units of `state_joints`) move the 3D arm."""
        self._vectors[kind].append((t_ns, np.asarray(values, dtype=np.float64)))
        if ros_values is not None:
            self._ros_state = (t_ns, np.asarray(ros_values, dtype=np.float64))

    def offer_chunk(self, t_ns: int, joint_names: Sequence[str], times_ns, positions) -> None:
        self._chunk.put("chunk", (t_ns, list(joint_names), np.asarray(times_ns), np.asarray(positions)))

    def offer_status(self, t_ns: int, info: EpisodeInfo) -> None:
        self._events.append(("status", t_ns, info))

    def offer_task(self, t_ns: int, task: str) -> None:
        self._events.append(("task", t_ns, task))

    def offer_diagnostics(self, t_ns: int, entries: Sequence[tuple[str, int, str]]) -> None:
        self._events.append(("diagnostics", t_ns, list(entries)))

    # -- consumer ---------------------------------------------------------------------------------
    def flush(self) -> None:
        """Log everything pending (the worker calls this every flush_period_s)."""
        while self._events:
            kind, t_ns, item = self._events.popleft()
            if kind == "status":
                self.log.episode_status(item, t_ns)
            elif kind == "task":
                self.log.set_task(item, t_ns)
            else:
                for name, level, message in item:
                    self.log.diagnostic(name, level, message, t_ns)
        for kind, queue in self._vectors.items():
            batch = [queue.popleft() for _ in range(len(queue))]
            if batch:
                self.log.vectors(kind, [t for t, _ in batch], np.stack([v for _, v in batch]))
                self.stats.vectors += len(batch)
        self._flush_robot()
        for feature, (t_ns, payload) in self.images.take().items():
            if not self.gate.allow(feature, t_ns):
                self.stats.images_skipped[feature] = self.stats.images_skipped.get(feature, 0) + 1
                continue
            try:
                image = self.decode_image(feature, payload)
            except Exception as exc:  # noqa: BLE001 - one bad frame must not stop the viewer
                self.stats.images_bad[feature] = self.stats.images_bad.get(feature, 0) + 1
                if self.error is None:
                    self.error = f"a frame of {feature} not drawn: {type(exc).__name__}: {exc}"
                continue
            self.log.image(feature, image, t_ns)
            self.stats.images_shown[feature] = self.stats.images_shown.get(feature, 0) + 1
        self.stats.images_offered = dict(self.images.offered)
        self.stats.images_dropped = dict(self.images.dropped)

    def _flush_robot(self) -> None:
        if self.robot is None:
            return
        state = self._ros_state
        hold = dict(zip(self.state_joints, state[1])) if state is not None else {}
        if state is not None and self.pose_gate.allow("pose", state[0]):
            self.log.pose(self.robot.pose_segments(self.state_joints, state[1]), state[0])
        chunk = self._chunk.take().get("chunk")
        if chunk is not None:
            t_ns, names, times_ns, positions = chunk
            try:
                g = self.robot.chunk(names, positions, np.asarray(times_ns) * 1e-9, hold)
            except ValueError as exc:  # a chunk on joints the URDF lacks: say it once
                if self.error is None:
                    self.error = f"predicted chunk not drawn: {exc}"
                return
            self.log.chunk(g.tip, g.colors, g.ghost, t_ns)
            self.stats.chunks += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self.flush()
            except Exception as exc:  # noqa: BLE001 - said once; the next flush tries again
                if self.error is None:
                    self.error = f"viewer: {type(exc).__name__}: {exc}"
            self._stop.wait(max(0.0, self.flush_period_s - (time.monotonic() - started)))
        self.flush()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="viewer-feed", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
