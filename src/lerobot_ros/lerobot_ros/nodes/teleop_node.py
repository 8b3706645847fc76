"""teleop_node: a LeRobot leader arm (so100/so101/koch leader) driving a follower over ROS.

Reads the leader at `fps` and publishes the action twice: on the follower's `commands_topic`
(std_msgs/Float64MultiArray in joint-name order, radians) and as the leader's own `joint_states`
(sensor_msgs/JointState, radians), so a recorder captures the action the way `lerobot-record` does.
Radians are 0 at the middle of each joint's calibrated range, for leader and follower alike, so arms
calibrated differently still agree. Diagnostics on /diagnostics; the port is reconnected with backoff.

Parameters: `TeleopNodeConfig` (hardware/config.py); fps and diagnostics_period_s can be changed while running.
"""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import numpy_to_float64_multi_array, numpy_to_joint_state
from lerobot_ros.hardware.config import TeleopNodeConfig
from lerobot_ros.hardware.devices import DeviceConfigError, make_leader
from lerobot_ros.hardware.driver import ArmDriver
from lerobot_ros.ros.diagnostics import diagnostic_array, health_status
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS


class TeleopNode(Node):
    params_class = TeleopNodeConfig

    def __init__(self, **kwargs):
        super().__init__("teleop_node", **kwargs)
        self.params = declare_params(self, TeleopNodeConfig, on_change=self._on_params)
        p = self.params.values
        self.teleop_type, self.port = p.teleop_type, p.teleop_port

        def factory():
            return make_leader(
                p.teleop_type,
                p.teleop_port,
                teleop_id=p.teleop_id,
                calibration_file=p.calibration_file,
                calibration_dir=p.calibration_dir,
            )

        try:
            self.names = list(factory().bus.motors)
        except DeviceConfigError as exc:
            raise NodeStartupError(str(exc)) from None
        self.driver = ArmDriver(factory)
        self.state_pub = self.create_publisher(JointState, "joint_states", SENSOR_QOS)
        self.command_pub = self.create_publisher(Float64MultiArray, p.commands_topic, RELIABLE_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        if not self.driver.connect():
            self.get_logger().warning(f"cannot open {self.port} yet ({self.driver.health.last_error}); retrying")
        self.tick_timer = self.create_timer(1.0 / p.fps, self.on_tick)
        self.diag_timer = self.create_timer(p.diagnostics_period_s, self.on_diagnostics)

    def _on_params(self, new: TeleopNodeConfig, changed: dict) -> None:
        if "fps" in changed:
            self.tick_timer.timer_period_ns = int(1e9 / new.fps)
        if "diagnostics_period_s" in changed:
            self.diag_timer.timer_period_ns = int(new.diagnostics_period_s * 1e9)

    def on_tick(self) -> None:
        positions = self.driver.poll()
        if positions is None:
            return
        now = self.get_clock().now().nanoseconds
        self.command_pub.publish(numpy_to_float64_multi_array(positions, labels=["joint"]))
        self.state_pub.publish(numpy_to_joint_state(self.names, positions, stamp_ns=now))

    def on_diagnostics(self) -> None:
        status = health_status(
            f"{self.get_fully_qualified_name()}: leader",
            self.port,
            self.driver.health,
            {"teleop_type": self.teleop_type},
        )
        self.diag_pub.publish(diagnostic_array(self.get_clock().now().nanoseconds, status))

    def close(self) -> None:
        self.driver.close()


def main(args=None) -> None:
    run_node(TeleopNode, args, torch=False)  # robot side: no torch (ros.torchless)


if __name__ == "__main__":
    main()
