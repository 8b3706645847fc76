"""LeKiwi's omniwheel base on its Feetech bus, driven at a steady rate from the latest velocity command.

`WheelBus` is LeRobot's own `FeetechMotorsBus` with the three wheel servos in velocity mode (as
`LeKiwi.configure` sets them): Goal_Velocity out, Present_Velocity in, raw steps/s. `BaseLoop` runs the
control thread: each tick it takes the gated command (mobile.base_control), shapes it, writes the wheel
goals, reads the wheel speeds back and integrates odometry from what the wheels did, not from what was
asked. A failed transfer stops the wheels at once (a zero goal is a write without a reply, so it reaches
the servos that still listen) and, after a few in a row, drops the port and reconnects with backoff;
the loop never raises.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from lerobot_ros.hardware.health import Backoff, Health
from lerobot_ros.mobile.base_control import BaseLimits, CommandGate, Odometry2D, VelocityShaper
from lerobot_ros.mobile.omni import WHEEL_NAMES, BaseVelocity, OmniGeometry

log = logging.getLogger(__name__)

RAD_PER_STEP = 2 * np.pi / 4096.0


class WheelBus:
    """The wheel servos (LeKiwi: ids 7, 8, 9, sts3215) through LeRobot's Feetech bus, in velocity mode."""

    def __init__(self, port: str, ids: Sequence[int] = (7, 8, 9), model: str = "sts3215"):
        from lerobot.motors import Motor, MotorNormMode
        from lerobot.motors.feetech import FeetechMotorsBus

        if len(ids) != len(WHEEL_NAMES):
            raise ValueError(f"an omniwheel base has {len(WHEEL_NAMES)} wheels; got ids {list(ids)}")
        motors = {n: Motor(int(i), model, MotorNormMode.RANGE_M100_100) for n, i in zip(WHEEL_NAMES, ids)}
        self.port = port
        self.bus = FeetechMotorsBus(port, motors)

    def connect(self) -> None:
        from lerobot.motors.feetech import OperatingMode

        self.bus.connect()  # LeRobot's handshake: every wheel id answers with its model
        with self.bus.torque_disabled():
            for name in WHEEL_NAMES:
                self.bus.write("Operating_Mode", name, OperatingMode.VELOCITY.value)
            self.bus.sync_write("Goal_Velocity", dict.fromkeys(WHEEL_NAMES, 0))
        self.bus.enable_torque()

    def exchange(self, goal_raw: np.ndarray) -> np.ndarray:
        """Write the wheel goals (steps/s), read the wheel speeds (steps/s)."""
        self.bus.sync_write("Goal_Velocity", {n: int(v) for n, v in zip(WHEEL_NAMES, goal_raw)})
        present = self.bus.sync_read("Present_Velocity", list(WHEEL_NAMES), normalize=False)
        return np.array([present[n] for n in WHEEL_NAMES], dtype=np.float64)

    def stop(self) -> None:
        """Zero goal on every wheel; a broadcast write waits for no reply."""
        self.bus.sync_write("Goal_Velocity", dict.fromkeys(WHEEL_NAMES, 0), num_retry=2)

    def drop(self) -> None:
        """Close the port without talking to the servos (it failed)."""
        try:
            self.bus.port_handler.closePort()
        except Exception:  # noqa: BLE001
            pass

    def close(self) -> None:
        """Stop the wheels, torque off, close."""
        try:
            self.stop()
        finally:
            self.bus.disconnect(disable_torque=True)


@dataclass
class BaseState:
    """One tick's report: what the wheels did and where that puts the base."""

    stamp_ns: int
    wheel_radps: np.ndarray  # measured, left/back/right
    wheel_angle_rad: np.ndarray  # integrated from the measured speeds
    measured: BaseVelocity
    commanded: BaseVelocity
    odom: Odometry2D


class BaseLoop:
    """The base's control thread: command in (any thread), wheel goals out and state reports at `fps`."""

    def __init__(
        self,
        bus_factory: Callable[[], WheelBus],
        geometry: OmniGeometry | None = None,
        limits: BaseLimits | None = None,
        command_timeout_s: float = 0.5,
        fps: float = 50.0,
        on_state: Callable[[BaseState], None] = lambda s: None,
        on_error: Callable[[str], None] = lambda text: None,
        now_ns: Callable[[], int] = time.time_ns,
        max_consecutive_errors: int = 3,
        bus_lock: threading.RLock | None = None,
    ):
        #: held for every bus transaction; shared with the arm's driver on LeKiwi's one bus (hardware.shared_port)
        self.bus_lock = bus_lock or threading.RLock()
        self.bus_factory = bus_factory
        self.geometry = geometry or OmniGeometry()
        self.gate = CommandGate(command_timeout_s)
        self.shaper = VelocityShaper(limits or BaseLimits())
        self.odom = Odometry2D()
        self.fps = float(fps)
        self.on_state, self.on_error, self.now_ns = on_state, on_error, now_ns
        self.max_consecutive_errors = max_consecutive_errors
        self.health = Health()
        self.backoff = Backoff()
        self.bus: WheelBus | None = None
        self._ever_connected = False
        self.lock = threading.Lock()
        self.wheel_angle: np.ndarray = np.zeros(3)
        self.stopped_for_timeout = 0  # times the command went stale while the base moved
        self._moving_target = False
        self._last_tick: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_write_ns = 0  # when the latest wheel goals left (bench: command -> wheel latency)

    # ----- commands (any thread) -------------------------------------------------------------------
    def command(self, v: BaseVelocity) -> str | None:
        """Take a velocity command; returns why it was refused (the base then stops), or None."""
        with self.lock:
            return self.gate.offer(v, time.monotonic())

    # ----- connection ------------------------------------------------------------------------------
    def connect(self) -> bool:
        with self.bus_lock:
            return self._connect()

    def _connect(self) -> bool:
        bus = None
        try:
            bus = self.bus_factory()
            bus.connect()
        except Exception as exc:  # noqa: BLE001 - a failed connect is retried with backoff
            if bus is not None:
                bus.drop()
            delay = self.backoff.failed()
            log.warning("wheel bus: connect failed (%s); next attempt in %.1f s", self.health.error(exc), delay)
            return False
        if self._ever_connected:
            self.health.reconnects += 1
        self._ever_connected = True
        self.backoff.succeeded()
        self.bus = bus
        self.health.connected = True
        self.health.ok()
        return True

    def _failed(self, exc: BaseException) -> None:
        text = self.health.error(exc)
        self.on_error(f"wheel bus: {text}; base stopped")
        self.shaper.reset()
        bus = self.bus
        if bus is None:
            return
        try:
            bus.bus.port_handler.is_using = False  # an exception mid-transaction leaves the port flagged busy
            bus.stop()
        except Exception:  # noqa: BLE001 - the port itself may be gone
            pass
        if self.health.consecutive_errors >= self.max_consecutive_errors:
            bus.drop()
            self.bus = None
            self.health.connected = False
            self.backoff.failed()

    # ----- the loop --------------------------------------------------------------------------------
    def tick(self) -> BaseState | None:
        """One control step; None when the bus is not there (then nothing moves)."""
        now = time.monotonic()
        dt = 0.0 if self._last_tick is None else min(now - self._last_tick, 0.5)
        self._last_tick = now
        if self.bus is None and not (self.backoff.due() and self.connect()):
            return None
        with self.lock:
            stale = self.gate.stale(now)
            target = self.gate.target(now)
        if stale and self._moving_target:
            self.stopped_for_timeout += 1
        self._moving_target = not stale and target != BaseVelocity()
        commanded = self.shaper.step(target, dt)
        goal = self.geometry.wheel_raw(commanded)
        assert self.bus is not None
        with self.bus_lock:
            try:
                present = self.bus.exchange(goal)
            except Exception as exc:  # noqa: BLE001 - any bus failure stops the base and is reported
                self._failed(exc)
                return None
        self.last_write_ns = time.perf_counter_ns()
        self.health.ok()
        self.health.tick()
        measured = self.geometry.body_velocity(present)
        self.odom.update(measured, dt)
        radps = present * RAD_PER_STEP
        self.wheel_angle = self.wheel_angle + radps * dt
        return BaseState(self.now_ns(), radps, self.wheel_angle.copy(), measured, commanded, self.odom)

    def _run(self) -> None:
        period = 1.0 / self.fps
        next_t = time.monotonic()
        while not self._stop.is_set():
            try:
                state = self.tick()
                if state is not None:
                    self.on_state(state)
            except Exception as exc:  # noqa: BLE001 - a report callback failing must not stop the wheels' loop
                self.on_error(f"base loop: {exc}")
            next_t += period
            delay = next_t - time.monotonic()
            if delay < -period:  # fell behind by more than a tick: start the schedule again from now
                next_t = time.monotonic()
            elif delay > 0:
                self._stop.wait(delay)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="base-loop", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the loop, then the wheels; torque off. Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
            self._thread = None
        bus, self.bus = self.bus, None
        if bus is not None:
            try:
                with self.bus_lock:
                    bus.close()
            except Exception as exc:  # noqa: BLE001
                log.warning("wheel bus: closing failed: %s", exc)
