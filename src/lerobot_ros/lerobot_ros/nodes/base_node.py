"""base_node: LeKiwi's omniwheel base on the topics a ROS mobile base has.

Takes `cmd_vel` (geometry_msgs/Twist: linear.x, linear.y in m/s, angular.z in rad/s; REP 103 body frame),
publishes `odom` (nav_msgs/Odometry, odom -> base_link per REP 105, integrated from the wheels' measured
speeds) and `joint_states` (the three wheels by LeRobot's names: angle in rad, speed in rad/s) at `fps`.
Safety: speed and acceleration limits, the base stops when no command has come for `command_timeout_s`,
a command with NaN or infinity is refused and stops the base, a wheel that stops answering stops the
base (then the port is reopened with backoff); all of it on /diagnostics and in one log line.
The wheel kinematics and raw units are LeRobot's LeKiwi (mobile.omni); the loop is
hardware.wheel_base.BaseLoop; this module decodes messages and publishes.

Parameters: `BaseNodeConfig` (hardware/config.py); the timeout, the limits and diagnostics_period_s can be changed
while running (`ros2 param set`).
"""

from __future__ import annotations

import math
import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import JointState

from lerobot_ros.codecs import numpy_to_joint_state
from lerobot_ros.codecs.odometry import fill_planar_odometry
from lerobot_ros.hardware.config import BaseNodeConfig
from lerobot_ros.hardware.shared_port import port_lock
from lerobot_ros.hardware.wheel_base import BaseLoop, BaseState, WheelBus
from lerobot_ros.mobile.base_control import BaseLimits
from lerobot_ros.mobile.omni import WHEEL_NAMES, BaseVelocity, OmniGeometry
from lerobot_ros.ros.diagnostics import diagnostic_array, health_status
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS


def base_limits(p: BaseNodeConfig) -> BaseLimits:
    """The node's ROS-unit limits (rad/s) as the library's LeRobot-unit ones (deg/s)."""
    return BaseLimits(
        max_linear_mps=p.max_linear_velocity,
        max_angular_degps=math.degrees(p.max_angular_velocity),
        max_linear_accel=p.max_linear_acceleration,
        max_angular_accel=math.degrees(p.max_angular_acceleration),
    )


class BaseNode(Node):
    params_class = BaseNodeConfig

    def __init__(self, **kwargs):
        super().__init__(kwargs.pop("node_name", "base_node"), **kwargs)
        self.params = declare_params(self, BaseNodeConfig, on_change=self._on_params)
        p = self.params.values
        if not p.port:
            raise NodeStartupError("parameter 'port' is empty: set it to the wheels' serial port (e.g. /dev/ttyACM0)")
        if len(p.wheel_ids) != len(WHEEL_NAMES):
            raise NodeStartupError(
                f"wheel_ids must list {len(WHEEL_NAMES)} servo ids (left, back, right); got {p.wheel_ids}"
            )
        geometry = OmniGeometry(wheel_radius_m=p.wheel_radius, base_radius_m=p.base_radius)
        self.loop = BaseLoop(
            lambda: WheelBus(p.port, p.wheel_ids),
            geometry=geometry,
            limits=base_limits(p),
            command_timeout_s=p.command_timeout_s,
            fps=p.fps,
            on_state=self._publish_state,
            on_error=lambda text: self.get_logger().error(text, throttle_duration_sec=1.0),
            now_ns=lambda: self.get_clock().now().nanoseconds,
            bus_lock=port_lock(p.port),  # shared with the arm's driver on LeKiwi's one bus (lekiwi_node)
        )
        self.odom_pub = self.create_publisher(Odometry, "odom", SENSOR_QOS)
        self.state_pub = self.create_publisher(JointState, "joint_states", SENSOR_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.create_subscription(Twist, "cmd_vel", self.on_cmd_vel, SENSOR_QOS)
        self._odom = Odometry()
        self._odom.header.frame_id, self._odom.child_frame_id = p.odom_frame, p.base_frame
        self._clamped_logged = 0
        self._diag_timer = self.create_timer(p.diagnostics_period_s, self.on_diagnostics)
        if not self.loop.connect():
            self.get_logger().warning(f"cannot open {p.port} yet ({self.loop.health.last_error}); retrying")
        self.loop.start()

    def _on_params(self, new: BaseNodeConfig, changed: dict) -> None:
        with self.loop.lock:
            self.loop.gate.timeout_s = new.command_timeout_s
            self.loop.shaper.limits = base_limits(new)
        if "diagnostics_period_s" in changed:
            self._diag_timer.cancel()
            self._diag_timer = self.create_timer(new.diagnostics_period_s, self.on_diagnostics)

    def on_cmd_vel(self, msg: Twist) -> None:
        v = BaseVelocity.from_twist(msg.linear.x, msg.linear.y, msg.angular.z)
        reason = self.loop.command(v)
        if reason is not None:
            self.get_logger().warning(f"ignoring cmd_vel ({reason}); base stopped", throttle_duration_sec=1.0)
        elif self.loop.shaper.clamped > self._clamped_logged:
            self._clamped_logged = self.loop.shaper.clamped
            lim = self.loop.shaper.limits
            self.get_logger().warning(
                f"cmd_vel beyond the limits ({lim.max_linear_mps:g} m/s, {math.radians(lim.max_angular_degps):.3g} rad/s): "
                "scaled down",
                throttle_duration_sec=5.0,
            )

    def _publish_state(self, s: BaseState) -> None:
        o, v = s.odom, s.measured
        self.odom_pub.publish(fill_planar_odometry(self._odom, s.stamp_ns, o.x, o.y, o.yaw, v.x, v.y, v.wz_radps))
        state = numpy_to_joint_state(WHEEL_NAMES, s.wheel_angle_rad, s.wheel_radps, stamp_ns=s.stamp_ns, frame_id="")
        self.state_pub.publish(state)

    def on_diagnostics(self) -> None:
        loop = self.loop
        with loop.lock:
            stale = loop.gate.stale(time.monotonic())
            extra = {
                "device": "lekiwi base",
                "command_state": "none (stopped)" if stale else "active",
                "commands_refused": loop.gate.rejected,
                "last_refusal": loop.gate.last_rejection,
                "commands_clamped": loop.shaper.clamped,
                "stops_for_timeout": loop.stopped_for_timeout,
                "odom_distance_m": f"{loop.odom.distance:.3f}",
            }
        status = health_status(f"{self.get_fully_qualified_name()}: base", self.params.values.port, loop.health, extra)
        self.diag_pub.publish(diagnostic_array(self.get_clock().now().nanoseconds, status))

    def close(self) -> None:
        """Stop the loop, zero the wheels, torque off. Idempotent."""
        self.loop.close()


def main(args=None) -> None:
    run_node(BaseNode, args, torch=False)  # robot side: no torch (ros.torchless)


if __name__ == "__main__":
    main()
