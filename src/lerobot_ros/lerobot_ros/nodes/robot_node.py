"""robot_node: a LeRobot follower arm (so100/so101/koch, or any single-bus LeRobot arm such as omx) on ROS topics.

Publishes `joint_states` (sensor_msgs/JointState, radians, 0 = middle of each joint's calibrated range;
the gripper too) at `fps`. Takes goals from `commands` (std_msgs/Float64MultiArray in joint-name
order), `joint_command` (sensor_msgs/JointState, by name, partial allowed) and `joint_trajectory`
(trajectory_msgs/JointTrajectory, points executed on their time_from_start, linear in between).
Safety: goals clipped to the calibrated range, LeRobot's `max_relative_target`, a watchdog (no command
for `watchdog_s` -> hold the present position), torque off on shutdown. Service `set_torque`
(std_srvs/SetBool). Port loss: errors go to /diagnostics and the log; reconnects with backoff.

Parameters: `RobotNodeConfig` (hardware/config.py); fps, watchdog_s, robot.max_relative_target, torque_off_on_shutdown and
diagnostics_period_s can be changed while running (`ros2 param set`), the others are read-only.
The logic (command checks, the control thread, live changes) is lerobot_ros.hardware.follower.FollowerArm
over hardware.control (the watchdog hold); this module decodes messages and publishes.
"""

from __future__ import annotations

import time
from typing import Any, cast

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.clock import ROSClock
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool
from trajectory_msgs.msg import JointTrajectory

from lerobot_ros.codecs import (
    CodecError,
    float64_array,
    float64_multi_array_to_numpy,
    joint_trajectory_to_chunk,
    numpy_to_joint_state,
    set_stamp,
    time_to_ns,
)
from lerobot_ros.hardware.config import RobotNodeConfig
from lerobot_ros.hardware.devices import DeviceConfigError, make_follower
from lerobot_ros.hardware.follower import FollowerArm
from lerobot_ros.hardware.shared_port import port_lock
from lerobot_ros.ros.diagnostics import diagnostic_array, health_status, watchdog_warning
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS


class RobotNode(Node):
    node_name = "robot_node"
    params_class: type[Any] = RobotNodeConfig  # MotorBusNode reads a MotorBusConfig

    def __init__(self, **kwargs):
        super().__init__(kwargs.pop("node_name", self.node_name), **kwargs)
        self.params = declare_params(self, self.params_class, on_change=self._on_params)
        p = self.params.values
        self.port, self.frame_id = self.bus_port(p), p.frame_id
        self._state_msg: JointState | None = None
        try:  # building the device once validates parameters and the calibration file
            self.arm = FollowerArm(
                self.device_factory(),
                fps=p.fps,
                watchdog_s=p.watchdog_s,
                diagnostics_period_s=p.diagnostics_period_s,
                torque_off_on_close=p.torque_off_on_shutdown,
                now_ns=self._now,
                on_state=self._publish_state,
                on_diagnostics=self.on_diagnostics,
                on_rejected=self._log_rejected,
                on_error=self._loop_error,
                log=self.get_logger(),
                name=f"{self.node_name}-loop",
                bus_lock=port_lock(self.port),  # shared with another driver on this port in this process
            )
        except DeviceConfigError as exc:
            raise NodeStartupError(str(exc)) from None

        self.state_pub = self.create_publisher(JointState, "joint_states", SENSOR_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.create_subscription(Float64MultiArray, "commands", self.on_commands, SENSOR_QOS)
        self.create_subscription(JointState, "joint_command", self.on_joint_command, SENSOR_QOS)
        self.create_subscription(JointTrajectory, "joint_trajectory", self.on_trajectory, RELIABLE_QOS)
        self.create_service(SetBool, "set_torque", self.on_set_torque)
        # The bus is driven by the arm's own control thread (steady rate, no executor overhead per tick);
        # ROS callbacks only hand it commands. /diagnostics also comes from that thread (see hardware.follower).
        if not self.arm.start():
            self.get_logger().warning(f"cannot open {self.port} yet ({self.arm.driver.health.last_error}); retrying")

    def _loop_error(self, exc: Exception) -> None:
        self.get_logger().error(f"control loop: {exc}", throttle_duration_sec=1.0)

    def _on_params(self, new: RobotNodeConfig, changed: dict) -> None:
        """Live changes: loop rate, watchdog, torque-off on shutdown, diagnostics period, max_relative_target."""
        self.arm.apply(changed)

    def bus_port(self, p) -> str:
        """The serial port of the bus this node drives."""
        return p.robot_port

    def device_factory(self):
        """A zero-argument callable building the (unconnected) LeRobot device from the current parameters."""
        self.device_label = self.robot_type = self.params.values.robot_type

        def factory():
            p = self.params.values
            return make_follower(
                p.robot_type,
                p.robot_port,
                robot_id=p.robot_id,
                calibration_file=p.calibration_file,
                calibration_dir=p.calibration_dir,
                max_relative_target=p.max_relative_target or None,
                disable_torque_on_disconnect=p.torque_off_on_shutdown,
            )

        return factory

    def joint_state(self, positions, stamp_ns: int) -> JointState:
        """The joint_states message for this tick. One message is reused: publish() serializes it at once,
        and building a fresh JointState (names, header) every loop costs a tenth of a bus round trip."""
        msg = self._state_msg
        if msg is None:
            msg = self._state_msg = numpy_to_joint_state(self.arm.names, positions, frame_id=self.frame_id)
        else:
            msg.position = float64_array(positions)
        set_stamp(msg.header.stamp, stamp_ns)
        return msg

    def _publish_state(self, positions, stamp_ns: int) -> None:
        self.state_pub.publish(self.joint_state(positions, stamp_ns))

    def _now(self) -> int:
        """ROS time in ns; the system clock read directly when no simulated time is active (the bus loop
        calls this every tick, and rclpy's Clock.now() costs several times more)."""
        clock = cast(ROSClock, self.get_clock())  # a node's clock is always a ROSClock
        return clock.now().nanoseconds if clock.ros_time_is_active else time.time_ns()

    # ----- commands -----------------------------------------------------------------------------------
    def on_commands(self, msg: Float64MultiArray) -> None:
        try:
            values = float64_multi_array_to_numpy(msg, expected_size=len(self.arm.names))
        except CodecError as exc:
            self.arm.bad_command(str(exc))
            return
        self.arm.command(values)

    def on_joint_command(self, msg: JointState) -> None:
        self.arm.joint_command(msg.name, msg.position)

    def on_trajectory(self, msg: JointTrajectory) -> None:
        try:
            times, positions = joint_trajectory_to_chunk(msg, self.arm.names)
        except CodecError as exc:
            self.arm.reject(f"joint_trajectory: {exc}")
            return
        self.arm.trajectory(times, positions, time_to_ns(msg.header.stamp))

    def _log_rejected(self, text: str) -> None:
        self.get_logger().warning("ignoring " + text, throttle_duration_sec=1.0)

    def on_set_torque(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        response.success, response.message = self.arm.set_torque(bool(request.data))
        return response

    # ----- reports ------------------------------------------------------------------------------------
    def on_diagnostics(self) -> None:
        with self.arm.lock:
            extra = {"device": self.device_label, **self.arm.diagnostic_values()}
            status = health_status(f"{self.get_fully_qualified_name()}: arm", self.port, self.arm.driver.health, extra)
            watchdog_warning(status, extra["command_state"], self.arm.buffer.watchdog_ns / 1e9)
        self.diag_pub.publish(diagnostic_array(self._now(), status))

    def close(self) -> None:
        """Stop the control thread, then disconnect (torque off when configured). Idempotent."""
        self.arm.close()


def main(args=None) -> None:
    run_node(RobotNode, args, torch=False)  # robot side: no torch (ros.torchless)


if __name__ == "__main__":
    main()
