"""Drive recorded episodes over ROS: recorder start -> seeded simulator reset -> wait for done -> recorder stop.

The simulator's own episode_status says when an episode ends and whether it succeeded; the recorder
writes one bag per episode, as lerobot-record does. Works with any bridge and recorder namespace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from lerobot_ros.conventions.errors import UserError
from lerobot_ros.ros.qos import EPISODE_STATUS_QOS  # as the bridge publishes episode_status
from lerobot_ros_msgs.msg import EpisodeStatus
from lerobot_ros_msgs.srv import ResetEpisode, StartEpisode, StopEpisode

if TYPE_CHECKING:
    from rclpy.task import Future


class DemoError(UserError, RuntimeError):
    """Something the demo cannot go on without; the message says what and where to look."""


@dataclass
class RecordedEpisode:
    index: int
    seed: int
    steps: int
    success: bool
    sum_reward: float
    bag: str
    wall_s: float


class EpisodeDriver:
    """Runs episodes on a bridge (`sim_ns`) while a recorder (`recorder_ns`) writes one bag each."""

    def __init__(self, node, sim_ns: str = "/sim", recorder_ns: str = "/recorder"):
        self.node = node
        self.sim_ns, self.recorder_ns = sim_ns.rstrip("/"), recorder_ns.rstrip("/")
        self.latest: EpisodeStatus | None = None
        self._changed = time.monotonic()
        node.create_subscription(EpisodeStatus, f"{self.sim_ns}/episode_status", self._on_status, EPISODE_STATUS_QOS)
        self.reset_client = node.create_client(ResetEpisode, f"{self.sim_ns}/reset_episode")
        self.start_client = node.create_client(StartEpisode, f"{self.recorder_ns}/start_episode")
        self.stop_client = node.create_client(StopEpisode, f"{self.recorder_ns}/stop_episode")

    def _on_status(self, msg: EpisodeStatus) -> None:
        if self.latest is None or (msg.episode_index, msg.step) != (self.latest.episode_index, self.latest.step):
            self._changed = time.monotonic()
        self.latest = msg

    def idle(self, quiet_s: float = 1.5) -> bool:
        """The bridge is not stepping: its episode is done, or no step for quiet_s (a recording must not
        start in the middle of an episode the policy source is still running)."""
        return self.latest is None or self.latest.done or time.monotonic() - self._changed > quiet_s

    def _call(self, client, request, timeout: float):
        future = client.call_async(request)
        deadline = time.monotonic() + timeout
        while not future.done():
            if time.monotonic() > deadline:
                client.remove_pending_request(future)
                raise DemoError(f"no answer from {client.srv_name} within {timeout:g} s")
            time.sleep(0.01)
        return future.result()

    def wait_ready(self, topics: list[str], timeout: float, alive=lambda: None, warm_up: bool = True) -> None:
        """Services up and the recorder subscribed to every topic it must record (else it would miss the start).

        warm_up: reset the bridge once as soon as it answers, so the simulator is built (tens of seconds for
        Meta-World on a small CPU) while the other nodes are still starting; that episode is not recorded.
        """
        deadline = time.monotonic() + timeout
        missing: list[str] = []
        warm: Future | Literal[True] | None = None if warm_up else True
        while time.monotonic() < deadline:
            alive()
            if warm is None and self.reset_client.service_is_ready():
                warm = self.reset_client.call_async(ResetEpisode.Request(seed=-1, options=""))
            missing = [
                c.srv_name for c in (self.reset_client, self.start_client, self.stop_client) if not c.service_is_ready()
            ]
            missing += [
                t
                for t in topics
                if not any(i.node_name == "episode_recorder" for i in self.node.get_subscriptions_info_by_topic(t))
            ]
            if warm is not True and (warm is None or not warm.done()):
                missing.append("the simulator's first reset")
            elif not self.idle():
                missing.append("the warm-up episode to stop stepping")
            if not missing:
                return
            time.sleep(0.2)
        raise DemoError(f"nodes not ready after {timeout:g} s; still waiting for: {', '.join(missing)}")

    def run_episode(self, seed: int, timeout: float, stall_s: float = 5.0, alive=lambda: None) -> RecordedEpisode:
        t0 = time.monotonic()
        started = self._call(self.start_client, StartEpisode.Request(), 30.0)
        if not started.success:
            raise DemoError(f"recorder refused to start an episode: {started.message}")
        reset = self._reset(seed)
        index = reset.episode_index
        deadline = time.monotonic() + timeout
        last_step, last_change = -1, time.monotonic()
        while True:
            alive()
            status = self.latest
            if status is not None and status.episode_index == index:
                if status.done:
                    break
                if status.step != last_step:
                    last_step, last_change = status.step, time.monotonic()
            if time.monotonic() - last_change > stall_s and last_step <= 0:
                # The policy source missed the episode's first observation (it still held the previous
                # episode's `done`): the same seeded reset publishes that observation again.
                self.node.get_logger().warning(f"episode {index} did not start stepping; resetting again (seed {seed})")
                index = self._reset(seed).episode_index
                last_change = time.monotonic()
            if time.monotonic() > deadline:
                self._call(self.stop_client, StopEpisode.Request(outcome="discard"), 30.0)
                raise DemoError(
                    f"episode {index} (seed {seed}) did not finish within {timeout:g} s "
                    f"(last step {last_step}); see the launch log"
                )
            time.sleep(0.01)
        outcome = "success" if status.success else "failure"
        stopped = self._call(self.stop_client, StopEpisode.Request(outcome=outcome), 60.0)
        if not stopped.success or not stopped.bag_path:
            raise DemoError(f"recorder could not save episode {index}: {stopped.message}")
        return RecordedEpisode(
            index,
            seed,
            int(status.step),
            bool(status.success),
            float(status.sum_reward),
            stopped.bag_path,
            time.monotonic() - t0,
        )

    def _reset(self, seed: int):
        reset = self._call(self.reset_client, ResetEpisode.Request(seed=seed, options=""), 120.0)
        if not reset.success:
            raise DemoError(f"simulator reset failed: {reset.message}")
        return reset
