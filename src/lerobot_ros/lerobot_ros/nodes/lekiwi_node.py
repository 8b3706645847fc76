"""lekiwi_node: LeKiwi's arm and its omniwheel base on their one Feetech bus, in one process, and the two as one
robot named as LeRobot's `lekiwi` names it.

A real LeKiwi has the arm (ids 1-6) and the wheels (ids 7-9) on one serial port, and two processes cannot share
a port. This process runs both drivers, each with its own LeRobot bus object, taking turns on the wire
(hardware.shared_port): `arm` is robot_node (joint_states, commands, joint_trajectory, set_torque, watchdog,
limits) and `base` is base_node (cmd_vel, odom, wheel joint states on `wheel_joint_states`, so the arm's
`joint_states` keep the arm's joints only). Pass the port to both: `-p robot.port:=/dev/ttyACM0 -p
port:=/dev/ttyACM0` (the launch file lekiwi.launch.yaml does).

The third node, `robot`, joins them (lerobot_ros.hardware.lekiwi.RobotJoin): `robot_state` (Float64MultiArray:
the arm's six joints in rad, then the base's measured x, y in m/s and yaw rate in rad/s; the lekiwi contract
converts to LeRobot's units) at the arm's rate, and `robot_commands` (the same nine, a policy node's action)
split into the arm's `commands` and the base's `cmd_vel`. An operator drives through `teleop/arm` (a leader's
six goals: teleop_node's commands_topic) and `teleop/cmd_vel` (a Twist): joined and published on
`robot_commands`, so a recorder sees one action whoever drives.

Parameters: robot_node's (`RobotNodeConfig`) on `arm`, base_node's (`BaseNodeConfig`) on `base`,
`LeKiwiRobotConfig` on `robot`.
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
from lerobot_ros.hardware.config import BaseNodeConfig, LeKiwiRobotConfig, RobotNodeConfig
from lerobot_ros.hardware.lekiwi import PARTS, RobotJoin
from lerobot_ros.hardware.omni import BaseVelocity
from lerobot_ros.nodes.base_node import BaseNode
from lerobot_ros.nodes.robot_node import RobotNode
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


#: the nodes this process runs and the parameters each declares (the reference tables and the launch-file check
#: read this: a parameter given to the process reaches every node, each takes its own)
NODES_IN_PROCESS = {"arm": RobotNodeConfig, "base": BaseNodeConfig, "robot": LeKiwiRobotConfig}


def make_nodes() -> list:
    made: list = []
    try:
        made.append(RobotNode(node_name="arm"))
        made.append(BaseNode(node_name="base", cli_args=["--ros-args", "-r", "joint_states:=wheel_joint_states"]))
        made.append(LeKiwiRobotNode())
    except BaseException:
        for node in reversed(made):
            if hasattr(node, "close"):
                node.close()
            node.destroy_node()
        raise
    return made


def main(args=None) -> None:
    run_node(make_nodes, args)


if __name__ == "__main__":
    main()
