"""A follower arm run from commands, without ROS: command intake, the control thread, live settings, diagnostics.

robot_node and motor_bus_node decode messages and hand the values here. `FollowerArm` checks them (one
rejection text per problem, also kept in the health record for /diagnostics), feeds the command buffer,
runs `FollowerControl` on a `SteadyLoop` and calls back with every state read and whenever diagnostics
are due. One lock serialises the loop and the callers (commands, torque, live changes); diagnostics come
from the control thread between two ticks, because a timer elsewhere waiting for the lock starved
whenever the loop overran (it takes the lock back at once), e.g. at a rate above the bus's speed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from lerobot_ros.configs import live_names
from lerobot_ros.hardware.commands import CommandBuffer
from lerobot_ros.hardware.config import RobotNodeConfig
from lerobot_ros.hardware.control_loop import FollowerControl, SteadyLoop
from lerobot_ros.hardware.driver import ArmDriver

#: the settings `apply` changes on a running arm: robot_node's reconfigurable parameters (hardware.config)
LIVE_SETTINGS = live_names(RobotNodeConfig)


def _ignore(*_args) -> None:
    return None


class FollowerArm:
    """`factory()` builds the unconnected device (LeRobot robot or `MotorBusDevice`); building it once here
    validates the configuration (DeviceConfigError) and gives the joint names, in bus order.

    Callbacks, all optional: `on_state(positions, stamp_ns)` after each read (radians), `on_diagnostics()`
    every `diagnostics_period_s`, `on_rejected(text)` for each command not taken, `on_error(exc)` for a
    tick that raised. `now_ns` stamps commands and reads (the node's ROS clock).
    """

    def __init__(
        self,
        factory: Callable,
        *,
        fps: float,
        watchdog_s: float,
        diagnostics_period_s: float = 1.0,
        torque_off_on_close: bool = True,
        now_ns: Callable[[], int] = time.time_ns,
        on_state: Callable = _ignore,
        on_diagnostics: Callable = _ignore,
        on_rejected: Callable = _ignore,
        on_error: Callable = _ignore,
        log=None,
        name: str = "follower-loop",
        bus_lock=None,
    ):
        self.names = list(factory().bus.motors)
        self._index = {n: i for i, n in enumerate(self.names)}
        self.driver = ArmDriver(factory, torque_off_on_close=torque_off_on_close, bus_lock=bus_lock)
        self.buffer = CommandBuffer(len(self.names), watchdog_s)
        self.control = FollowerControl(self.driver, self.buffer, log=log)
        self.now_ns, self.on_state, self.on_diagnostics, self.on_rejected = (
            now_ns,
            on_state,
            on_diagnostics,
            on_rejected,
        )
        self.lock = threading.RLock()
        self.diagnostics_period_s = diagnostics_period_s
        self._next_diagnostics = time.monotonic()
        self.loop = SteadyLoop(self._tick, 1.0 / fps, name=name, on_error=on_error)

    def start(self) -> bool:
        """Open the port (False: not yet, the loop keeps retrying with backoff) and start the control thread."""
        connected = self.driver.connect()
        self.loop.start()
        return connected

    def _tick(self) -> None:
        with self.lock:
            now = self.now_ns()
            positions = self.control.step(now)
            if positions is not None:  # handed on after the write, while the servos work on it
                self.on_state(positions, now)
            if time.monotonic() >= self._next_diagnostics:
                self._next_diagnostics = time.monotonic() + self.diagnostics_period_s
                self.on_diagnostics()

    # ----- commands -----------------------------------------------------------------------------------
    def reject(self, text: str) -> None:
        self.driver.health.values["last_rejected_command"] = text[:200]
        self.on_rejected(text)

    def bad_command(self, problem: str) -> None:
        """A `commands` message that is not one finite value per joint."""
        self.reject(f"commands: {problem}; expected {len(self.names)} values in order {self.names}")

    def command(self, values) -> None:
        """Goal positions (radians) in joint order, effective at once."""
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if values.size != len(self.names):
            return self.bad_command(f"got {values.size} values")
        if not np.all(np.isfinite(values)):
            return self.bad_command("command contains NaN or infinite values")
        with self.lock:
            self.buffer.set_positions(values, self.now_ns())

    def joint_command(self, names, positions) -> None:
        """Goals by joint name; a partial command keeps the other joints' goals (or present positions)."""
        names, positions = list(names), np.asarray(positions, dtype=np.float64).reshape(-1)
        unknown = [n for n in names if n not in self._index]
        if unknown or len(positions) != len(names) or not names:
            return self.reject(f"joint_command: needs positions for known joints {self.names}; got names {names}")
        fallback = self.driver.last_positions
        if fallback is None and len(names) < len(self.names):
            return self.reject("joint_command: partial command before the first joint state was read")
        with self.lock:
            self.buffer.set_partial([self._index[n] for n in names], positions, self.now_ns(), fallback)

    def trajectory(self, times_ns, positions, stamp_ns: int = 0) -> None:
        """Points (T, joints) due at `stamp_ns` (0 = now) + times_ns, linear in between, starting from the
        present position; no points clears every goal."""
        positions = np.asarray(positions, dtype=np.float64)
        with self.lock:
            if positions.size == 0:
                self.buffer.clear()
                return
            now = self.now_ns()
            self.buffer.set_trajectory(times_ns, positions, stamp_ns or now, now, current=self.driver.last_positions)

    def set_torque(self, enable: bool) -> tuple[bool, str]:
        """Torque on/off; pending goals are dropped (never jump back to a goal from before the change)."""
        try:
            with self.lock:
                self.buffer.clear()
                self.driver.set_torque(bool(enable))
        except Exception as exc:  # noqa: BLE001 - reported to the caller
            return False, f"could not set torque: {exc}"
        return True, f"torque {'enabled' if enable else 'disabled'}"

    # ----- settings and reports -----------------------------------------------------------------------
    def apply(self, changed: dict) -> None:
        """Live changes, keyed by LIVE_SETTINGS names; effective from the next tick."""
        unknown = set(changed) - set(LIVE_SETTINGS)
        if unknown:
            raise ValueError(f"not changeable while running: {sorted(unknown)}")
        with self.lock:
            if "fps" in changed:
                self.loop.period_s = 1.0 / changed["fps"]
            if "watchdog_s" in changed:
                self.buffer.watchdog_ns = int(changed["watchdog_s"] * 1e9)
            if "torque_off_on_shutdown" in changed:
                self.driver.torque_off_on_close = changed["torque_off_on_shutdown"]
            if "diagnostics_period_s" in changed:
                self.diagnostics_period_s = changed["diagnostics_period_s"]
            if "robot.max_relative_target" in changed:
                # LeRobot's send_action reads its config each call; a reconnect builds from the new value
                config = getattr(self.driver.device, "config", None)
                if config is not None:
                    config.max_relative_target = changed["robot.max_relative_target"] or None

    def diagnostic_values(self) -> dict[str, str]:
        """The arm's own entries next to the driver's health: torque, command state, commands received."""
        with self.lock:
            return {
                "torque_enabled": str(self.driver.torque_enabled).lower(),
                "command_state": self.buffer.state(self.now_ns()),
                "commands_received": str(self.buffer.count),
            }

    def close(self) -> None:
        """Stop the control thread, then disconnect (torque off when configured). Idempotent."""
        self.loop.stop()
        with self.lock:
            self.driver.close()


__all__ = ["LIVE_SETTINGS", "FollowerArm"]
