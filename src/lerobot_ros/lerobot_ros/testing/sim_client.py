"""A client of a sim bridge over DDS: publishes actions, collects observations, calls reset."""

from __future__ import annotations

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from lerobot_ros.codecs import (
    numpy_to_float64_multi_array,
)
from lerobot_ros.ros.qos import EPISODE_STATUS_QOS, RELIABLE_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until
from lerobot_ros_msgs.msg import EpisodeStatus
from lerobot_ros_msgs.srv import ResetEpisode


class Client:
    """A lockstep client: sends one action and waits for the episode_status of the step it caused."""

    def __init__(self, ros, ns: str):
        self.node = ros.create_node(f"client_{ns.strip('/') or 'root'}")
        # transient local, like the bridge: a client matched after a status was published still gets it
        self.status = MessageCollector(self.node, EpisodeStatus, f"{ns}/episode_status", EPISODE_STATUS_QOS)
        self.joints = MessageCollector(self.node, JointState, f"{ns}/joint_states", 10)
        self.env_state = MessageCollector(self.node, Float64MultiArray, f"{ns}/environment_state", 10)
        self.commands = self.node.create_publisher(Float64MultiArray, f"{ns}/commands", RELIABLE_QOS)
        self.trajectory = self.node.create_publisher(JointTrajectory, f"{ns}/joint_trajectory", RELIABLE_QOS)
        self.reset_client = self.node.create_client(ResetEpisode, f"{ns}/reset_episode")

    def last_status(self) -> EpisodeStatus | None:
        msgs = self.status.messages
        return msgs[-1] if msgs else None

    def wait_status(self, pred, timeout=60.0, what="episode status") -> EpisodeStatus:
        wait_until(lambda: any(pred(m) for m in self.status.messages), timeout, what=what)
        return next(m for m in reversed(self.status.messages) if pred(m))

    def wait_subscribed(self, timeout=20.0):
        wait_until(lambda: self.commands.get_subscription_count() > 0, timeout, what="bridge subscribed to commands")

    def step(self, action) -> EpisodeStatus:
        last = self.last_status()
        if last is None:
            raise RuntimeError("step() before the bridge published any episode status: reset() first")
        want = (last.episode_index, last.step + 1)
        self.commands.publish(numpy_to_float64_multi_array(np.asarray(action, dtype=float)))
        return self.wait_status(lambda m: (m.episode_index, m.step) == want, what=f"step {want}")

    def reset(self, seed: int, timeout=120.0):
        assert self.reset_client.wait_for_service(timeout_sec=20.0)
        future = self.reset_client.call_async(ResetEpisode.Request(seed=seed))
        wait_until(future.done, timeout, what="reset_episode response")
        response = future.result()
        self.wait_status(lambda m: m.episode_index == response.episode_index and m.step == 0)
        return response
