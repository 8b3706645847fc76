"""robot_node: a LeRobot follower arm (so100/so101/koch, or any single-bus LeRobot arm such as omx) on ROS topics.

Publishes `joint_states` (sensor_msgs/JointState, radians, 0 = middle of each joint's calibrated range;
the gripper too) at `rate_hz`. Takes goals from `commands` (std_msgs/Float64MultiArray in joint-name
order), `joint_command` (sensor_msgs/JointState, by name, partial allowed) and `joint_trajectory`
(trajectory_msgs/JointTrajectory, points executed on their time_from_start, linear in between).
Safety: goals clipped to the calibrated range, LeRobot's `max_relative_target`, a watchdog (no command
for `watchdog_s` -> hold the present position), torque off on shutdown. Service `set_torque`
(std_srvs/SetBool). Port loss: errors go to /diagnostics and the log; reconnects with backoff.

Parameters: robot_type, port, robot_id, calibration_file | calibration_dir, rate_hz, watchdog_s,
max_relative_target (LeRobot units: degrees, gripper 0..100; 0 = off), torque_off_on_shutdown, frame_id.
"""

from __future__ import annotations

import threading
import time

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
from lerobot_ros.hardware.commands import TIMEOUT, CommandBuffer
from lerobot_ros.hardware.devices import DeviceConfigError, make_follower
from lerobot_ros.ros.diagnostics import diagnostic_array, health_status
from lerobot_ros.hardware.driver import ArmDriver
from lerobot_ros.ros.param_getter import param_getter
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS


class RobotNode(Node):
    node_name = "robot_node"

    def __init__(self, **kwargs):
        super().__init__(kwargs.pop("node_name", self.node_name), **kwargs)
        p = param_getter(self)
        self.port = p("port", "")
        rate_hz = float(p("rate_hz", 30.0))
        watchdog_s = float(p("watchdog_s", 0.5))
        torque_off = bool(p("torque_off_on_shutdown", True))
        self.frame_id = p("frame_id", "")
        if rate_hz <= 0 or watchdog_s <= 0:
            raise NodeStartupError(f"rate_hz ({rate_hz}) and watchdog_s ({watchdog_s}) must be positive")
        factory = self.device_factory(p, torque_off)
        try:
            self.names = list(factory().bus.motors)  # validates parameters and the calibration file
        except DeviceConfigError as exc:
            raise NodeStartupError(str(exc)) from None
        self.driver = ArmDriver(factory, torque_off_on_close=torque_off)
        self.buffer = CommandBuffer(len(self.names), watchdog_s)
        self._index = {n: i for i, n in enumerate(self.names)}
        self._holding = False
        self._last_state = ""
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
        self._stop = threading.Event()
        if not self.driver.connect():
            self.get_logger().warning(f"cannot open {self.port} yet ({self.driver.health.last_error}); retrying")
        # /diagnostics comes from the control thread, between two ticks: an executor timer waiting for the bus
        # lock starved whenever the loop overran (it takes the lock back at once), e.g. rate_hz above the bus's
        # speed in bench/hardware.py, which then saw no diagnostics in a 1 s window.
        diagnostics_period = float(p("diagnostics_period_s", 1.0))
        self._thread = threading.Thread(target=self._control_loop, args=(1.0 / rate_hz, diagnostics_period),
                                        name="robot_node-loop", daemon=True)
        self._thread.start()

    def _control_loop(self, period: float, diagnostics_period: float) -> None:
        next_tick = next_diagnostics = time.monotonic()
        while not self._stop.is_set():
            try:
                with self._lock:
                    self.on_tick()
                    if time.monotonic() >= next_diagnostics:
                        next_diagnostics = time.monotonic() + diagnostics_period
                        self.on_diagnostics()
            except Exception as exc:  # noqa: BLE001 - the loop must survive anything a tick throws
                self.get_logger().error(f"control loop: {exc}", throttle_duration_sec=1.0)
            next_tick += period
            delay = next_tick - time.monotonic()
            if delay > 0:
                self._stop.wait(delay)
            else:
                next_tick = time.monotonic()  # overran: do not try to catch up with a burst

    def device_factory(self, p, torque_off: bool):
        """A zero-argument callable building the (unconnected) LeRobot device from parameters."""
        self.device_label = self.robot_type = p("robot_type", "so101_follower")
        robot_id, calibration_file = p("robot_id", "follower"), p("calibration_file", "")
        calibration_dir, max_rel = p("calibration_dir", ""), float(p("max_relative_target", 0.0))

        def factory():
            return make_follower(
                self.robot_type,
                self.port,
                robot_id=robot_id,
                calibration_file=calibration_file,
                calibration_dir=calibration_dir,
                max_relative_target=max_rel if max_rel > 0 else None,
                disable_torque_on_disconnect=torque_off,
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
        torque = self.driver.torque_enabled
        state = self.buffer.state(now)
        goal = self.buffer.goal(now) if torque else None
        # Read and write back to back (the goal is computed before the read); the joint state is
        # published after the write, while the servos (or the emulator) work on it.
        positions = self.driver.exchange(goal)
        if positions is None:
            return
        if goal is not None:
            self._holding = False
        elif torque and state == TIMEOUT and not self._holding:
            self.get_logger().warning("command watchdog expired: holding the present position")
            self.driver.write(positions, report_sent=False)
            self._holding = True
        self._last_state = state
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
        self.diag_pub.publish(diagnostic_array(self._now(), status))

    def close(self) -> None:
        """Stop the control thread, then disconnect (torque off when configured). Idempotent."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        with self._lock:
            self.driver.close()


def main(args=None) -> None:
    run_node(RobotNode, args)


if __name__ == "__main__":
    main()
