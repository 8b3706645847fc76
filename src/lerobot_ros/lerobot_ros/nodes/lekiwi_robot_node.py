"""lekiwi_robot_node: LeKiwi's arm and base as one robot named as LeRobot's `lekiwi` names it (the `robot` node of
lekiwi_node, on its own for the MuJoCo twin: sim_lekiwi.launch.yaml runs it beside sim_bridge_node, which plays the
arm and the base).

`robot_state` (Float64MultiArray: the arm's six joints in rad from `joint_states`, then the base's measured x, y in
m/s and yaw rate in rad/s from `odom`; the lekiwi contract converts to LeRobot's units) and `robot_commands` (the
same nine, a policy node's action) split into the arm's `commands` and the base's `cmd_vel`. An operator drives
through `teleop/arm` (a leader's six goals) and `teleop/cmd_vel` (a Twist): joined and published on
`robot_commands`, so a recorder sees one action whoever drives. The logic is lerobot_ros.hardware.lekiwi.RobotJoin.

Parameters: `LeKiwiRobotConfig` (hardware/config.py).
"""

from __future__ import annotations

import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import CodecError, float64_multi_array_to_numpy, numpy_to_float64_multi_array
from lerobot_ros.hardware.bimanual import CommandRefused
from lerobot_ros.hardware.config import LeKiwiRobotConfig
from lerobot_ros.hardware.lekiwi import PARTS, RobotJoin
from lerobot_ros.mobile.omni import BaseVelocity
from lerobot_ros.ros.diagnostics import diagnostic_array, values_status
from lerobot_ros.ros.entry import run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS


def twist(v: BaseVelocity) -> Twist:
    msg = Twist()
    msg.linear.x, msg.linear.y, msg.angular.z = v.x, v.y, v.wz_radps
    return msg


class LeKiwiRobotNode(Node):
    params_class = LeKiwiRobotConfig

    def __init__(self, **kwargs):
        super().__init__(kwargs.pop("node_name", "robot"), **kwargs)
        self.params = declare_params(self, LeKiwiRobotConfig, on_change=self._on_params)
        p = self.params.values
        self.join = RobotJoin(stale_s=p.stale_s)
        self.state_pub = self.create_publisher(Float64MultiArray, "robot_state", SENSOR_QOS)
        self.commands_pub = self.create_publisher(Float64MultiArray, "robot_commands", RELIABLE_QOS)
        self.arm_pub = self.create_publisher(Float64MultiArray, "commands", RELIABLE_QOS)
        self.base_pub = self.create_publisher(Twist, "cmd_vel", RELIABLE_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.create_subscription(JointState, "joint_states", self.on_arm_state, SENSOR_QOS)
        self.create_subscription(Odometry, "odom", self.on_odom, SENSOR_QOS)
        self.create_subscription(Float64MultiArray, "robot_commands", self.on_commands, SENSOR_QOS)
        self.create_subscription(Float64MultiArray, "teleop/arm", self.on_teleop_arm, SENSOR_QOS)
        self.create_subscription(Twist, "teleop/cmd_vel", self.on_teleop_base, SENSOR_QOS)
        self._diag_timer = self.create_timer(p.diagnostics_period_s, self.on_diagnostics)

    def _on_params(self, new: LeKiwiRobotConfig, changed: dict) -> None:
        self.join.stale_s = new.stale_s
        if "diagnostics_period_s" in changed:
            self._diag_timer.cancel()
            self._diag_timer = self.create_timer(new.diagnostics_period_s, self.on_diagnostics)

    def on_arm_state(self, msg: JointState) -> None:
        self.join.on_arm(msg.name, msg.position, time.monotonic())
        state = self.join.state()
        if state is not None:
            self.state_pub.publish(numpy_to_float64_multi_array(state))

    def on_odom(self, msg: Odometry) -> None:
        t = msg.twist.twist
        self.join.on_base(BaseVelocity.from_twist(t.linear.x, t.linear.y, t.angular.z), time.monotonic())

    def on_commands(self, msg: Float64MultiArray) -> None:
        try:
            arm, base = self.join.split(float64_multi_array_to_numpy(msg), time.monotonic())
        except (CodecError, CommandRefused) as exc:
            self.get_logger().warning(f"ignoring robot_commands: {exc}", throttle_duration_sec=1.0)
            return
        self.arm_pub.publish(numpy_to_float64_multi_array(arm))
        self.base_pub.publish(twist(base))

    def on_teleop_arm(self, msg: Float64MultiArray) -> None:
        try:
            values = float64_multi_array_to_numpy(msg, expected_size=6)
        except CodecError as exc:
            self.get_logger().warning(f"ignoring teleop/arm: {exc}", throttle_duration_sec=1.0)
            return
        self._operator("arm", values)

    def on_teleop_base(self, msg: Twist) -> None:
        self._operator("base", [msg.linear.x, msg.linear.y, msg.angular.z])

    def _operator(self, part: str, values) -> None:
        joined = self.join.on_operator(part, values, time.monotonic())
        if joined is not None:
            self.commands_pub.publish(numpy_to_float64_multi_array(joined))

    def on_diagnostics(self) -> None:
        stale = self.join.stale(time.monotonic())
        message = f"no state from the {' and '.join(stale)}: the robot holds" if stale else "ok"
        status = values_status(
            f"{self.get_fully_qualified_name()}: robot",
            "lekiwi",
            message,
            {
                "parts_alive": ", ".join(p for p in PARTS if p not in stale) or "none",
                "commands_refused": self.join.refused,
                "last_refusal": self.join.last_refusal,
            },
        )
        if stale:
            status.level = DiagnosticStatus.ERROR
        self.diag_pub.publish(diagnostic_array(self.get_clock().now().nanoseconds, status))


def main(args=None) -> None:
    run_node(LeKiwiRobotNode, args, torch=False)  # robot side: no torch (ros.torchless)


if __name__ == "__main__":
    main()
