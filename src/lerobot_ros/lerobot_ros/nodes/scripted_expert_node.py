"""scripted_expert_node: a scripted policy publishing on a bridge's `commands`, like a teleoperator would.

expert=metaworld: Meta-World's expert for `task`, acting on each `environment_state` (the 39-D state).
expert=so101_pick: the SO-101 pick on joint targets, from `joint_states` and the cube position in
`environment_state`. The bridge publishes `episode_status`, `joint_states` and `environment_state` once
per step, but topics are not ordered with respect to each other: the node acts once it holds all of a
step's messages (whatever order they came in), so it never mixes the previous step's cube with this
step's joints, never keeps a finished episode's phase for the first step of the next one, and sends
exactly one action per step (a lockstep bridge runs closed-loop at simulation speed). It pauses once
`episode_status` says done and starts over on the next episode. The synchronisation is
lerobot_ros.sim.expert_sync; parameters are `ExpertConfig` (sim/config.py).
"""

from __future__ import annotations

from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import (
    CodecError,
    float64_multi_array_to_numpy,
    joint_state_to_numpy,
    numpy_to_float64_multi_array,
)
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS
from lerobot_ros.sim import SimStartupError
from lerobot_ros.sim.config import ExpertConfig
from lerobot_ros.sim.expert_sync import ENV_STATE, JOINTS, STATUS, StepStatus
from lerobot_ros.sim.registry import make_expert_sync
from lerobot_ros.sim.so101_twin import JOINT_NAMES
from lerobot_ros_msgs.msg import EpisodeStatus


class ScriptedExpertNode(Node):
    params_class = ExpertConfig

    def __init__(self, node_name: str = "scripted_expert", **kwargs):
        super().__init__(node_name, **kwargs)
        p = declare_params(self, ExpertConfig).values
        try:
            self.sync = make_expert_sync(p.expert, p.env_task, p.scene)
        except SimStartupError as exc:
            raise NodeStartupError(str(exc)) from None
        self.kind = p.expert
        self.expert = self.sync.expert
        self.actions_sent = 0
        self.pub = self.create_publisher(Float64MultiArray, "commands", RELIABLE_QOS)
        self.create_subscription(EpisodeStatus, "episode_status", self.on_status, 10)
        self.create_subscription(Float64MultiArray, "environment_state", self.on_env_state, RELIABLE_QOS)
        if JOINTS in self.sync.needs:
            self.create_subscription(JointState, "joint_states", self.on_joints, RELIABLE_QOS)
        self.get_logger().info(f"{p.expert} expert ready (task {p.env_task!r})")

    @property
    def episode_index(self) -> int:
        return self.sync.episode_index

    @property
    def done(self) -> bool:
        return self.sync.done

    def on_status(self, msg: EpisodeStatus) -> None:
        self._offer(STATUS, StepStatus(msg.episode_index, bool(msg.done)))

    def on_env_state(self, msg: Float64MultiArray) -> None:
        try:
            value = float64_multi_array_to_numpy(msg).reshape(-1)
        except CodecError as exc:
            self.get_logger().warning(f"ignoring environment_state: {exc}", throttle_duration_sec=1.0)
            return
        self._offer(ENV_STATE, value)

    def on_joints(self, msg: JointState) -> None:
        try:
            value = joint_state_to_numpy(msg, JOINT_NAMES)
        except CodecError as exc:
            self.get_logger().warning(f"ignoring joint_states: {exc}", throttle_duration_sec=1.0)
            return
        self._offer(JOINTS, value)

    def _offer(self, key: str, value) -> None:
        try:
            action = self.sync.offer(key, value)
        except ValueError as exc:
            self.get_logger().warning(str(exc), throttle_duration_sec=1.0)
            return
        if action is not None:
            self.pub.publish(numpy_to_float64_multi_array(action))
            self.actions_sent += 1


def main(args=None) -> None:
    run_node(ScriptedExpertNode, args)


if __name__ == "__main__":
    main()
