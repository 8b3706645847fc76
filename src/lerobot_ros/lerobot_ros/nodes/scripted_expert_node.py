"""scripted_expert_node: a scripted policy publishing on a bridge's `commands`, like a teleoperator would.

expert=metaworld: Meta-World's expert for `task`, acting on each `environment_state` (the 39-D state).
expert=so101_pick: the SO-101 pick on joint targets, from `joint_states` and the cube position in
`environment_state`. The bridge publishes `episode_status`, `joint_states` and `environment_state` once
per step, but topics are not ordered with respect to each other: the node acts once it holds all of a
step's messages (whatever order they came in), so it never mixes the previous step's cube with this
step's joints, never keeps a finished episode's phase for the first step of the next one, and sends
exactly one action per step (a lockstep bridge runs closed-loop at simulation speed). It pauses once
`episode_status` says done and starts over on the next episode.
"""

from __future__ import annotations

import numpy as np
from lerobot_ros_msgs.msg import EpisodeStatus
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import CodecError, float64_multi_array_to_numpy, joint_state_to_numpy, numpy_to_float64_multi_array
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.qos import RELIABLE_QOS
from lerobot_ros.sim import SimStartupError
from lerobot_ros.sim.registry import make_expert
from lerobot_ros.sim.so101_twin import JOINT_NAMES


class ScriptedExpertNode(Node):
    def __init__(self, node_name: str = "scripted_expert", **kwargs):
        super().__init__(node_name, **kwargs)
        kind = self.declare_parameter("expert", "metaworld").value
        task = self.declare_parameter("task", "push-v3").value
        scene = self.declare_parameter("scene", "pick").value
        try:
            self.expert = make_expert(kind, task, scene)
        except SimStartupError as exc:
            raise NodeStartupError(str(exc)) from None
        self.kind = kind
        self.episode_index = -1
        self.done = False
        self.actions_sent = 0
        self.env_state: np.ndarray | None = None
        self._inputs: dict = {}  # this step's messages so far: status, env_state (, joints)
        self.pub = self.create_publisher(Float64MultiArray, "commands", RELIABLE_QOS)
        self.create_subscription(EpisodeStatus, "episode_status", self.on_status, 10)
        self.create_subscription(Float64MultiArray, "environment_state", self.on_env_state, RELIABLE_QOS)
        if kind == "so101_pick":
            self.create_subscription(JointState, "joint_states", self.on_joints, RELIABLE_QOS)
        self.get_logger().info(f"{kind} expert ready (task {task!r})")

    def _needs(self) -> tuple[str, ...]:
        return ("status", "env_state", "joints") if self.kind == "so101_pick" else ("status", "env_state")

    def on_status(self, msg: EpisodeStatus) -> None:
        self._inputs["status"] = msg
        self._maybe_act()

    def _send(self, action: np.ndarray) -> None:
        self.pub.publish(numpy_to_float64_multi_array(action))
        self.actions_sent += 1

    def on_env_state(self, msg: Float64MultiArray) -> None:
        try:
            self.env_state = float64_multi_array_to_numpy(msg).reshape(-1)
        except CodecError as exc:
            self.get_logger().warning(f"ignoring environment_state: {exc}", throttle_duration_sec=1.0)
            return
        self._inputs["env_state"] = self.env_state
        self._maybe_act()

    def on_joints(self, msg: JointState) -> None:
        try:
            self._inputs["joints"] = joint_state_to_numpy(msg, JOINT_NAMES)
        except CodecError as exc:
            self.get_logger().warning(f"ignoring joint_states: {exc}", throttle_duration_sec=1.0)
            return
        self._maybe_act()

    def _maybe_act(self) -> None:
        """Act once per step, when the step's status and observations have all arrived."""
        if any(k not in self._inputs for k in self._needs()):
            return
        inputs, self._inputs = self._inputs, {}
        status = inputs["status"]
        if status.episode_index != self.episode_index:
            self.episode_index = status.episode_index
            self.expert.reset()
        self.done = bool(status.done)
        if self.done:
            return
        try:
            if self.kind == "metaworld":
                action = self.expert.act(inputs["env_state"])
            else:
                action = self.expert.act(inputs["joints"], inputs["env_state"][:3])
        except ValueError as exc:
            self.get_logger().warning(str(exc), throttle_duration_sec=1.0)
            return
        self._send(action)


def main(args=None) -> None:
    run_node(ScriptedExpertNode, args)


if __name__ == "__main__":
    main()
