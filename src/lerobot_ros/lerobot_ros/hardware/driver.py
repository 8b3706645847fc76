"""A LeRobot arm (follower robot or leader teleoperator) kept alive: connect, read, write, reconnect.

The driver never raises from `read`/`write`: failures are counted in `health` and, after a few in a
row, the port is dropped and reconnected with exponential backoff. Goals are clipped to the calibrated
range before LeRobot sees them (LeRobot's degree mode does not clip), and LeRobot's own
`max_relative_target` is applied by the robot's `send_action`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from lerobot_ros.hardware.health import Backoff, Health
from lerobot_ros.hardware.units import JointUnits

log = logging.getLogger(__name__)

VOLTAGE_REGISTERS = ("Present_Voltage", "Present_Input_Voltage")


class ArmDriver:
    """Wraps a LeRobot Robot (has send_action) or Teleoperator (has get_action) built by `factory`."""

    def __init__(
        self,
        factory: Callable[[], Any],  # LeRobot's Robot / Teleoperator classes are untyped
        max_consecutive_errors: int = 3,
        backoff: Backoff | None = None,
        torque_off_on_close: bool = True,
        status_period_s: float = 1.0,
        bus_lock: threading.RLock | None = None,
    ):
        self.factory = factory
        #: held for every bus transaction; shared with another driver on the same port (hardware.shared_port)
        self.bus_lock = bus_lock or threading.RLock()
        self.max_consecutive_errors = max_consecutive_errors
        self.backoff = backoff or Backoff()
        self.torque_off_on_close = torque_off_on_close
        self.status_period_s = status_period_s
        self.health = Health()
        self.device: Any = None  # the connected LeRobot Robot or Teleoperator (untyped; None: not connected)
        self.units: JointUnits | None = None  # set by the first successful connect()
        self.torque_enabled = False
        self._torque_wanted: bool | None = None  # what set_torque asked for (kept across reconnects)
        self.last_positions: np.ndarray | None = None
        self._next_status = 0.0
        self._ever_connected = False
        self.closed = False

    # ----- connection ---------------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        return self.health.connected

    @property
    def is_robot(self) -> bool:
        return hasattr(self.device, "send_action")

    def _connect_unlocked(self) -> bool:
        """Try to connect now; on failure schedule the next attempt (backoff) and return False."""
        try:
            device = self.factory()
            device.connect(calibrate=False)
            bus = device.bus
            if not device.is_calibrated:
                # What LeRobot's calibrate() does when the user accepts the existing file: write it to the motors.
                log.info("writing calibration file %s to the motors", device.calibration_fpath)
                with bus.torque_disabled():
                    bus.write_calibration(device.calibration)
            self.units = JointUnits.from_bus(bus)
            self.device = device
            self.torque_enabled = self.is_robot  # followers come up with torque on, leaders with it off
            if self.is_robot and self._torque_wanted is False:  # a reconnect after set_torque(false): keep it off
                bus.disable_torque()
                self.torque_enabled = False
        except Exception as exc:  # noqa: BLE001 - any failure to connect is retried
            self._drop(device if "device" in locals() else None)
            delay = self.backoff.failed()
            msg = self.health.error(exc)
            log.warning("connect failed (%s); next attempt in %.1f s", msg, delay)
            return False
        self.backoff.succeeded()
        if self._ever_connected:
            self.health.reconnects += 1
        self._ever_connected = True
        self.health.connected = True
        self.health.ok()
        return True

    def maybe_reconnect(self) -> bool:
        if self.connected:
            return True
        if self.closed or not self.backoff.due():
            return False
        return self.connect()

    def _drop(self, device) -> None:
        """Forget a device whose port failed, closing the port without talking to the motors."""
        if device is None:
            return
        try:
            device.bus.port_handler.closePort()
        except Exception:  # noqa: BLE001
            pass
        try:
            for cam in getattr(device, "cameras", {}).values():
                cam.disconnect()
        except Exception:  # noqa: BLE001
            pass

    def _failed(self, exc: BaseException, what: str) -> None:
        msg = self.health.error(exc)
        log.warning("%s failed: %s", what, msg)
        try:  # an exception mid-transaction leaves the SDK's port flagged busy ("Port is in use!")
            self.device.bus.port_handler.is_using = False
        except AttributeError:
            pass
        if self.health.consecutive_errors >= self.max_consecutive_errors:
            log.error("%d consecutive errors: dropping the port and reconnecting", self.health.consecutive_errors)
            self._drop(self.device)
            self.device = None
            self.health.connected = False
            self.backoff.failed()

    # ----- I/O ----------------------------------------------------------------------------------------
    def _read_unlocked(self) -> np.ndarray | None:
        """Present joint positions in radians (a loop like `exchange` without a goal, but no reconnect attempt);
        None when disconnected or the read failed."""
        if not self.connected:
            return None
        return self._transfer(None)

    def poll(self) -> np.ndarray | None:
        """One control-loop read: reconnect when due, read, count the tick. None when nothing was read."""
        return self.exchange(None)

    def _exchange_unlocked(self, goal_radians=None) -> np.ndarray | None:
        """One control-loop step: reconnect when due, read the present positions and, when `goal_radians`
        is given (a follower), send it right after the read, back to back on the bus; count the tick.
        Returns the positions in radians, or None when nothing was read (then nothing is sent either)."""
        if not self.maybe_reconnect():
            return None
        return self._transfer(goal_radians)

    def _transfer(self, goal_radians) -> np.ndarray | None:
        """Read, then write `goal_radians` (if any) at once. Everything that is not bus traffic (unit
        conversions, status registers) happens before the read or after the write: a gap between the two
        leaves the servos (and a pty emulator) idle and costs more than the work in it."""
        action = None
        if goal_radians is not None and self.is_robot:
            assert self.units is not None  # a device is there: connect() got through and set the units
            action = self.units.from_radians(goal_radians, suffix=".pos")  # clipped to the calibrated range
        try:
            values = self.device.get_observation() if self.is_robot else self.device.get_action()
        except Exception as exc:  # noqa: BLE001
            self._failed(exc, "read")
            return None
        try:
            if action is not None:
                self.device.send_action(action)
        except Exception as exc:  # noqa: BLE001 - counts towards a reconnect: this tick commanded nothing
            self._failed(exc, "write")
        else:
            self.health.ok()  # read, and written when there was a goal
        try:
            assert self.units is not None  # the device answered: connect() got through and set the units
            positions = self.units.to_radians(values, suffix=".pos")
            why = self.units.implausible(positions)
            if why is not None:
                raise ValueError(why)
        except Exception as exc:  # noqa: BLE001 - a reply LeRobot accepted but our units cannot map or believe
            self._failed(exc, "read")
            return None
        self.last_positions = positions
        self.health.tick()
        if self.connected:
            self._maybe_read_status()
        return positions

    def _write_unlocked(self, radians, report_sent: bool = True) -> np.ndarray | None:
        """Send goal positions (radians, joint order) clipped to the calibrated range; returns what was sent
        (after LeRobot's max_relative_target) unless `report_sent` is False (the control loop's hot path)."""
        if not self.connected or not self.is_robot:
            return None
        assert self.units is not None  # connected: connect() got through and set the units
        goal = self.units.from_radians(radians, suffix=".pos")  # clipped to the calibrated range
        try:
            sent = self.device.send_action(goal)
            result = self.units.to_radians(sent, suffix=".pos") if report_sent else None
        except Exception as exc:  # noqa: BLE001
            self._failed(exc, "write")
            return None
        self.health.ok()
        return result

    def _set_torque_unlocked(self, enable: bool) -> None:
        """Enable or disable torque on every motor; enabling first sets the goal to the present position."""
        if not self.connected:
            raise ConnectionError("not connected to the arm")
        bus = self.device.bus
        if enable:
            present = bus.sync_read("Present_Position")
            bus.sync_write("Goal_Position", present)
            bus.enable_torque()
        else:
            bus.disable_torque()
        self.torque_enabled = self._torque_wanted = enable

    def _maybe_read_status(self) -> None:
        now = time.monotonic()
        if now < self._next_status:
            return
        self._next_status = now + self.status_period_s
        bus = self.device.bus
        table = bus.model_ctrl_table[next(iter(bus.motors.values())).model]
        try:
            for reg in VOLTAGE_REGISTERS:
                if reg in table:
                    volts = bus.sync_read(reg, normalize=False)
                    self.health.values["voltage_v"] = f"{min(volts.values()) / 10:.1f}..{max(volts.values()) / 10:.1f}"
            temps = bus.sync_read("Present_Temperature", normalize=False)
            self.health.values["temperature_c_max"] = str(max(temps.values()))
        except Exception as exc:  # noqa: BLE001 - status registers are best effort
            self.health.values["status_read"] = f"failed: {exc}"[:200]

    def _close_unlocked(self) -> None:
        """Disconnect; torque off first when configured (LeRobot's disconnect does it). Final."""
        self.closed = True
        self.health.connected = False
        device, self.device = self.device, None
        if device is None:
            if self.torque_off_on_close and self._ever_connected:
                self._torque_off_fresh()
            return
        try:
            if self.is_robot_device(device):
                device.bus.disconnect(disable_torque=self.torque_off_on_close)
            else:
                device.disconnect()
        except Exception as exc:  # noqa: BLE001
            log.warning("disconnect failed: %s", exc)
            self._drop(device)
            if self.torque_off_on_close and self.is_robot_device(device):
                self._torque_off_fresh()
        self.health.connected = False

    def _torque_off_fresh(self) -> None:
        """Shutting down between a dropped port and its reconnect: open the port once more, torque off."""
        try:
            device = self.factory()
            device.bus.connect(handshake=False)
            try:
                device.bus.disable_torque(num_retry=5)
            finally:
                device.bus.port_handler.closePort()
        except Exception as exc:  # noqa: BLE001 - the port may really be gone
            log.warning("could not switch torque off on shutdown: %s", exc)

    # ----- every public bus operation under the port's lock --------------------------------------------
    def connect(self) -> bool:
        """Try to connect now; on failure schedule the next attempt (backoff) and return False."""
        with self.bus_lock:
            return self._connect_unlocked()

    def read(self) -> np.ndarray | None:
        """Present joint positions in radians (no reconnect attempt); None when disconnected or the read failed."""
        with self.bus_lock:
            return self._read_unlocked()

    def exchange(self, goal_radians=None) -> np.ndarray | None:
        """One control-loop step: reconnect when due, read, then send `goal_radians` (a follower) back to back."""
        with self.bus_lock:
            return self._exchange_unlocked(goal_radians)

    def write(self, radians, report_sent: bool = True) -> np.ndarray | None:
        """Send goal positions (radians, joint order) clipped to the calibrated range."""
        with self.bus_lock:
            return self._write_unlocked(radians, report_sent)

    def set_torque(self, enable: bool) -> None:
        """Enable or disable torque on every motor; enabling first sets the goal to the present position."""
        with self.bus_lock:
            self._set_torque_unlocked(enable)

    def close(self) -> None:
        """Disconnect; torque off first when configured. Final."""
        with self.bus_lock:
            self._close_unlocked()

    @staticmethod
    def is_robot_device(device) -> bool:
        return hasattr(device, "send_action")
