"""bimanual_node: two arms, each with its own robot_node (`/left`, `/right`), as one robot named as LeRobot's
`bi_so_follower` names it.

Publishes `joint_states` (both arms, joints prefixed `left_` / `right_`, left first; on every arm's message once
both have reported). Takes `commands` (std_msgs/Float64MultiArray, the pair's joints in that order: a policy
node's action) and passes each half to its arm's `commands`. Two leaders drive the pair through
`teleop/left` and `teleop/right` (each teleop_node's commands_topic): their halves are joined and published
on `commands`, so a recorder sees one action whoever drives. An arm whose joint_states stopped for
`stale_s` stops the pair: commands are refused and both arms hold (their watchdogs); NaN is refused whole;
both on /diagnostics and in one log line. The logic is lerobot_ros.hardware.bimanual.ArmPair.

Parameters: `BimanualNodeConfig` (hardware/config.py).
"""

from __future__ import annotations

import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import (
    CodecError,
    float64_multi_array_to_numpy,
    numpy_to_float64_multi_array,
    numpy_to_joint_state,
    time_to_ns,
)
from lerobot_ros.hardware.bimanual import SIDES, ArmPair, CommandRefused
from lerobot_ros.hardware.config import BimanualNodeConfig
from lerobot_ros.ros.diagnostics import diagnostic_array, values_status
from lerobot_ros.ros.entry import run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS


class BimanualNode(Node):
    params_class = BimanualNodeConfig

    def __init__(self, **kwargs):
        super().__init__(kwargs.pop("node_name", "bimanual_node"), **kwargs)
        self.params = declare_params(self, BimanualNodeConfig, on_change=self._on_params)
        p = self.params.values
        self.pair = ArmPair(stale_s=p.stale_s)
        namespaces = {"left": p.left_namespace, "right": p.right_namespace}
        self.arm_commands = {
            side: self.create_publisher(Float64MultiArray, f"{ns.rstrip('/')}/commands", RELIABLE_QOS)
            for side, ns in namespaces.items()
        }
        for side, ns in namespaces.items():
            self.create_subscription(
                JointState, f"{ns.rstrip('/')}/joint_states", lambda m, s=side: self.on_arm_state(s, m), SENSOR_QOS
            )
            self.create_subscription(
                Float64MultiArray, f"teleop/{side}", lambda m, s=side: self.on_teleop(s, m), SENSOR_QOS
            )
        self.state_pub = self.create_publisher(JointState, "joint_states", SENSOR_QOS)
        self.commands_pub = self.create_publisher(Float64MultiArray, "commands", RELIABLE_QOS)
        self.create_subscription(Float64MultiArray, "commands", self.on_commands, SENSOR_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self._diag_timer = self.create_timer(p.diagnostics_period_s, self.on_diagnostics)

    def _on_params(self, new: BimanualNodeConfig, changed: dict) -> None:
        self.pair.stale_s = new.stale_s
        if "diagnostics_period_s" in changed:
            self._diag_timer.cancel()
            self._diag_timer = self.create_timer(new.diagnostics_period_s, self.on_diagnostics)

    def on_arm_state(self, side: str, msg: JointState) -> None:
        self.pair.on_state(side, msg.name, msg.position, time_to_ns(msg.header.stamp), time.monotonic())
        both = self.pair.pair_state()
        if both is not None:
            names, positions, stamp_ns = both
            self.state_pub.publish(numpy_to_joint_state(names, positions, stamp_ns=stamp_ns))

    def on_commands(self, msg: Float64MultiArray) -> None:
        try:
            values = float64_multi_array_to_numpy(msg)
            halves = self.pair.split(values, time.monotonic())
        except (CodecError, CommandRefused) as exc:
            self.get_logger().warning(f"ignoring commands: {exc}", throttle_duration_sec=1.0)
            return
        for side, half in zip(SIDES, halves):
            self.arm_commands[side].publish(numpy_to_float64_multi_array(half))

    def on_teleop(self, side: str, msg: Float64MultiArray) -> None:
        try:
            values = float64_multi_array_to_numpy(msg)
        except CodecError as exc:
            self.get_logger().warning(f"ignoring teleop/{side}: {exc}", throttle_duration_sec=1.0)
            return
        joined = self.pair.on_teleop(side, values, time.monotonic())
        if joined is not None:
            self.commands_pub.publish(numpy_to_float64_multi_array(joined))

    def on_diagnostics(self) -> None:
        stale = self.pair.stale_arms(time.monotonic())
        message = f"no joint_states from the {' and '.join(stale)} arm: both arms hold" if stale else "ok"
        status = values_status(
            f"{self.get_fully_qualified_name()}: pair",
            "bimanual",
            message,
            {
                "arms_alive": ", ".join(s for s in SIDES if s not in stale) or "none",
                "commands_refused": self.pair.refused,
                "last_refusal": self.pair.last_refusal,
            },
        )
        if stale:
            status.level = DiagnosticStatus.ERROR
        self.diag_pub.publish(diagnostic_array(self.get_clock().now().nanoseconds, status))


def main(args=None) -> None:
    run_node(BimanualNode, args, torch=False)  # robot side: no torch (ros.torchless)


if __name__ == "__main__":
    main()
