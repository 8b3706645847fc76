"""robot_node: a LeRobot follower arm (so100/so101/koch, or any single-bus LeRobot arm such as omx) on ROS topics.

Publishes `joint_states` (sensor_msgs/JointState, radians, 0 = middle of each joint's calibrated range;
the gripper too) at `rate_hz`. Takes goals from `commands` (std_msgs/Float64MultiArray in joint-name
order), `joint_command` (sensor_msgs/JointState, by name, partial allowed) and `joint_trajectory`
(trajectory_msgs/JointTrajectory, points executed on their time_from_start, linear in between).
Safety: goals clipped to the calibrated range, LeRobot's `max_relative_target`, a watchdog (no command
for `watchdog_s` -> hold the present position), torque off on shutdown. Service `set_torque`
(std_srvs/SetBool). Port loss: errors go to /diagnostics and the log; reconnects with backoff.

Parameters: `RobotParams` below; rate_hz, watchdog_s, max_relative_target, torque_off_on_shutdown and
diagnostics_period_s can be changed while running (`ros2 param set`), the others are read-only.
The control step (watchdog hold) is lerobot_ros.hardware.control.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
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
from lerobot_ros.hardware.commands import CommandBuffer
from lerobot_ros.hardware.control import FollowerControl, SteadyLoop
from lerobot_ros.hardware.devices import DeviceConfigError, make_follower
from lerobot_ros.ros.diagnostics import diagnostic_array, health_status, watchdog_warning
from lerobot_ros.hardware.driver import ArmDriver
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params, param
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS


@dataclass(frozen=True)
class ArmLoopParams:
    """What robot_node and motor_bus_node share: the port, the loop, the watchdog, shutdown, diagnostics."""

    port: str = param("", "serial port of the bus, e.g. /dev/ttyACM0 (a virtual-arm pty works too)")
    rate_hz: float = param(30.0, "control loop rate: read, write and publish joint_states", unit="Hz",
                           min=0.0, min_exclusive=True, reconfigurable=True)
    watchdog_s: float = param(0.5, "no command for this long -> hold the present position", unit="s",
                              min=0.0, min_exclusive=True, reconfigurable=True)
    torque_off_on_shutdown: bool = param(True, "switch torque off when the node stops", reconfigurable=True)
    frame_id: str = param("", "frame_id of joint_states")
    diagnostics_period_s: float = param(1.0, "period of /diagnostics", unit="s", min=0.0, min_exclusive=True,
                                        reconfigurable=True)


@dataclass(frozen=True)
class RobotParams(ArmLoopParams):
    robot_type: str = param("so101_follower", "LeRobot robot type (so100_follower, so101_follower, koch_follower, "
                                              "omx_follower, any single-bus LeRobot arm)")
    robot_id: str = param("follower", "LeRobot robot id: names the calibration file in calibration_dir")
    calibration_file: str = param("", "LeRobot calibration JSON; '' = <calibration_dir>/<robot_id>.json")
    calibration_dir: str = param("", "folder of calibration files; '' = LeRobot's default")
    max_relative_target: float = param(0.0, "LeRobot's max_relative_target: the largest step per command; 0 = off",
                                       unit="LeRobot units (degrees, gripper 0..100)", min=0.0, reconfigurable=True)


class RobotNode(Node):
    node_name = "robot_node"
    params_class = RobotParams

    def __init__(self, **kwargs):
        super().__init__(kwargs.pop("node_name", self.node_name), **kwargs)
        self.params = declare_params(self, self.params_class, on_change=self._on_params)
        p = self.params.values
        self.port, self.frame_id = p.port, p.frame_id
        factory = self.device_factory()
        try:
            self.names = list(factory().bus.motors)  # validates parameters and the calibration file
        except DeviceConfigError as exc:
            raise NodeStartupError(str(exc)) from None
        self.driver = ArmDriver(factory, torque_off_on_close=p.torque_off_on_shutdown)
        self.buffer = CommandBuffer(len(self.names), p.watchdog_s)
        self.control = FollowerControl(self.driver, self.buffer, log=self.get_logger())
        self._index = {n: i for i, n in enumerate(self.names)}
        self._state_msg: JointState | None = None

        self.state_pub = self.create_publisher(JointState, "joint_states", SENSOR_QOS)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.create_subscription(Float64MultiArray, "commands", self.on_commands, SENSOR_QOS)
        self.create_subscription(JointState, "joint_command", self.on_joint_command, SENSOR_QOS)
        self.create_subscription(JointTrajectory, "joint_trajectory", self.on_trajectory, RELIABLE_QOS)
        self.create_service(SetBool, "set_torque", self.on_set_torque)
        # The bus is driven by one control thread (steady rate, no executor overhead per tick); ROS
        # callbacks only touch the command buffer and the driver under this lock.
        self._lock = threading.RLock()
        if not self.driver.connect():
            self.get_logger().warning(f"cannot open {self.port} yet ({self.driver.health.last_error}); retrying")
        # /diagnostics comes from the control thread between two ticks: an executor timer waiting for the bus lock
        # starved whenever the loop overran (it takes the lock back at once), e.g. rate_hz above the bus's speed
        # in bench/hardware.py, which then saw no diagnostics in a 1 s window.
        self.diagnostics_period_s = p.diagnostics_period_s
        self._next_diagnostics = time.monotonic()
        self.loop = SteadyLoop(self._locked_tick, 1.0 / p.rate_hz, name="robot_node-loop", on_error=self._loop_error)
        self.loop.start()

    def _locked_tick(self) -> None:
        with self._lock:
            self.on_tick()
            if time.monotonic() >= self._next_diagnostics:
                self._next_diagnostics = time.monotonic() + self.diagnostics_period_s
                self.on_diagnostics()

    def _loop_error(self, exc: Exception) -> None:
        self.get_logger().error(f"control loop: {exc}", throttle_duration_sec=1.0)

    def _on_params(self, new: RobotParams, changed: dict) -> None:
        """Live changes: loop rate, watchdog, torque-off on shutdown, diagnostics period, max_relative_target."""
        with self._lock:
            if "rate_hz" in changed:
                self.loop.period_s = 1.0 / new.rate_hz
            if "watchdog_s" in changed:
                self.buffer.watchdog_ns = int(new.watchdog_s * 1e9)
            if "torque_off_on_shutdown" in changed:
                self.driver.torque_off_on_close = new.torque_off_on_shutdown
            if "diagnostics_period_s" in changed:
                self.diagnostics_period_s = new.diagnostics_period_s
            if "max_relative_target" in changed:
                # LeRobot's send_action reads its config each call; a reconnect builds from the new value
                config = getattr(self.driver.device, "config", None)
                if config is not None:
                    config.max_relative_target = new.max_relative_target or None

    def device_factory(self):
        """A zero-argument callable building the (unconnected) LeRobot device from the current parameters."""
        self.device_label = self.robot_type = self.params.values.robot_type

        def factory():
            p = self.params.values
            return make_follower(
                p.robot_type,
                p.port,
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
            msg = self._state_msg = numpy_to_joint_state(self.names, positions, frame_id=self.frame_id)
        else:
            msg.position = float64_array(positions)
        set_stamp(msg.header.stamp, stamp_ns)
        return msg

    def _now(self) -> int:
        """ROS time in ns; the system clock read directly when no simulated time is active (the bus loop
        calls this every tick, and rclpy's Clock.now() costs several times more)."""
        clock = self.get_clock()
        return clock.now().nanoseconds if clock.ros_time_is_active else time.time_ns()

    # ----- commands -----------------------------------------------------------------------------------
    def on_commands(self, msg: Float64MultiArray) -> None:
        try:
            values = float64_multi_array_to_numpy(msg, expected_size=len(self.names)).reshape(-1)
            if not np.all(np.isfinite(values)):
                raise CodecError("command contains NaN or infinite values")
        except CodecError as exc:
            self._reject(f"commands: {exc}; expected {len(self.names)} values in order {self.names}")
            return
        with self._lock:
            self.buffer.set_positions(values, self._now())

    def on_joint_command(self, msg: JointState) -> None:
        unknown = [n for n in msg.name if n not in self._index]
        if unknown or len(msg.position) != len(msg.name) or not msg.name:
            self._reject(f"joint_command: needs positions for known joints {self.names}; got names {list(msg.name)}")
            return
        fallback = self.driver.last_positions
        if fallback is None and len(msg.name) < len(self.names):
            self._reject("joint_command: partial command before the first joint state was read")
            return
        with self._lock:
            self.buffer.set_partial([self._index[n] for n in msg.name], np.asarray(msg.position), self._now(), fallback)

    def on_trajectory(self, msg: JointTrajectory) -> None:
        try:
            times, positions = joint_trajectory_to_chunk(msg, self.names)
        except CodecError as exc:
            self._reject(f"joint_trajectory: {exc}")
            return
        with self._lock:
            if positions.size == 0:
                self.buffer.clear()
                return
            now = self._now()
            start = time_to_ns(msg.header.stamp) or now
            self.buffer.set_trajectory(times, positions, start, now, current=self.driver.last_positions)

    def _reject(self, text: str) -> None:
        self.driver.health.values["last_rejected_command"] = text[:200]
        self.get_logger().warning("ignoring " + text, throttle_duration_sec=1.0)

    def on_set_torque(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        try:
            with self._lock:
                self.buffer.clear()  # never jump back to a goal from before the change
                self.driver.set_torque(bool(request.data))
            response.success, response.message = True, f"torque {'enabled' if request.data else 'disabled'}"
        except Exception as exc:  # noqa: BLE001 - reported to the caller
            response.success, response.message = False, f"could not set torque: {exc}"
        return response

    # ----- control loop -------------------------------------------------------------------------------
    def on_tick(self) -> None:
        now = self._now()
        positions = self.control.step(now)
        if positions is not None:  # published after the write, while the servos work on it
            self.state_pub.publish(self.joint_state(positions, now))

    def on_diagnostics(self) -> None:
        with self._lock:
            extra = {
                "device": self.device_label,
                "torque_enabled": str(self.driver.torque_enabled).lower(),
                "command_state": self.buffer.state(self._now()),
                "commands_received": str(self.buffer.count),
            }
            status = health_status(f"{self.get_fully_qualified_name()}: arm", self.port, self.driver.health, extra)
            watchdog_warning(status, extra["command_state"], self.buffer.watchdog_ns / 1e9)
        self.diag_pub.publish(diagnostic_array(self._now(), status))

    def close(self) -> None:
        """Stop the control thread, then disconnect (torque off when configured). Idempotent."""
        self.loop.stop()
        with self._lock:
            self.driver.close()


def main(args=None) -> None:
    run_node(RobotNode, args)


if __name__ == "__main__":
    main()
