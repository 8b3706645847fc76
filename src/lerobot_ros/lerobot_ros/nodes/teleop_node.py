"""teleop_node: a LeRobot leader arm (so100/so101/koch leader) driving a follower over ROS.

Reads the leader at `rate_hz` and publishes the action twice: on the follower's `commands_topic`
(std_msgs/Float64MultiArray in joint-name order, radians) and as the leader's own `joint_states`
(sensor_msgs/JointState, radians), so a recorder captures the action the way `lerobot-record` does.
Radians are 0 at the middle of each joint's calibrated range, for leader and follower alike, so arms
calibrated differently still agree. Diagnostics on /diagnostics; the port is reconnected with backoff.

Parameters: teleop_type, port, teleop_id, calibration_file | calibration_dir, rate_hz, commands_topic.
"""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import numpy_to_float64_multi_array, numpy_to_joint_state
from lerobot_ros.hardware.devices import DeviceConfigError, make_leader
from lerobot_ros.ros.diagnostics import diagnostic_array, health_status
from lerobot_ros.hardware.driver import ArmDriver
from lerobot_ros.ros.param_getter import param_getter
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS


class TeleopNode(Node):
    def __init__(self, **kwargs):
        super().__init__("teleop_node", **kwargs)
        p = param_getter(self)
        self.teleop_type = p("teleop_type", "so101_leader")
        self.port = p("port", "")
        teleop_id = p("teleop_id", "leader")
        calibration_file = p("calibration_file", "")
        calibration_dir = p("calibration_dir", "")
        rate_hz = float(p("rate_hz", 30.0))
        commands_topic = p("commands_topic", "/follower/commands")
        if rate_hz <= 0:
            raise NodeStartupError(f"rate_hz must be positive, got {rate_hz}")

        def factory():
            return make_leader(
                self.teleop_type, self.port, teleop_id=teleop_id,
                calibration_file=calibration_file, calibration_dir=calibration_dir,
            )

        try:
            self.names = list(factory().bus.motors)
        except DeviceConfigError as exc:
            raise NodeStartupError(str(exc)) from None
        self.driver = ArmDriver(factory)
        self.state_pub = self.create_publisher(JointState, "joint_states", SENSOR_QOS)
        self.command_pub = self.create_publisher(Float64MultiArray, commands_topic, RELIABLE_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        if not self.driver.connect():
            self.get_logger().warning(f"cannot open {self.port} yet ({self.driver.health.last_error}); retrying")
        self.create_timer(1.0 / rate_hz, self.on_tick)
        self.create_timer(float(p("diagnostics_period_s", 1.0)), self.on_diagnostics)

    def on_tick(self) -> None:
        positions = self.driver.poll()
        if positions is None:
            return
        now = self.get_clock().now().nanoseconds
        self.command_pub.publish(numpy_to_float64_multi_array(positions, labels=["joint"]))
        self.state_pub.publish(numpy_to_joint_state(self.names, positions, stamp_ns=now))

    def on_diagnostics(self) -> None:
        status = health_status(
            f"{self.get_fully_qualified_name()}: leader", self.port, self.driver.health, {"teleop_type": self.teleop_type}
        )
        self.diag_pub.publish(diagnostic_array(self.get_clock().now().nanoseconds, status))

    def close(self) -> None:
        self.driver.close()


def main(args=None) -> None:
    run_node(TeleopNode, args)


if __name__ == "__main__":
    main()
