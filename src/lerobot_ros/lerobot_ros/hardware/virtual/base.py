"""LeKiwi's three wheel servos (sts3215, ids 7, 8, 9) emulated on a pty: LeRobot's Feetech bus puts them in
velocity mode and drives them as it drives the real ones; the test side reads the wheel speeds and, through
mobile.omni, how the base moved."""

from __future__ import annotations

import os

import numpy as np

from lerobot_ros.hardware.virtual.arms import VirtualArm
from lerobot_ros.hardware.virtual.bus import VirtualBus
from lerobot_ros.hardware.virtual.servo import VirtualServo
from lerobot_ros.mobile.omni import WHEEL_NAMES, BaseVelocity, OmniGeometry

LEKIWI_WHEEL_IDS = (7, 8, 9)


class VirtualOmniBase:
    """Three wheel servos on a pty; `with_arm`: LeKiwi's whole bus, a calibrated SO-101 follower arm (ids 1-6) and
    the wheels on one port, as on the robot."""

    def __init__(
        self,
        port: str | os.PathLike | None = None,
        ids=LEKIWI_WHEEL_IDS,
        tau_s: float = 0.05,
        with_arm: bool = False,
        realtime: bool = False,
    ):
        self.ids = tuple(int(i) for i in ids)
        wheels = [VirtualServo(i, "sts3215", tau_s=tau_s) for i in self.ids]
        # the arm's own bus object is never started (its servos go on this bus): no port of its own
        self.arm = VirtualArm("so101", "follower", port=os.devnull) if with_arm else None
        arm_servos = list(self.arm.bus.servos.values()) if self.arm is not None else []
        self.bus = VirtualBus(
            arm_servos + wheels, port=port, name="lekiwi" if with_arm else "lekiwi_base", realtime=realtime
        )
        self.geometry = OmniGeometry()

    @property
    def port(self) -> str:
        return self.bus.port

    def wheel(self, name: str) -> VirtualServo:
        sid = self.ids[WHEEL_NAMES.index(name)]
        return self.bus.servos.get(sid) or self.bus.missing[sid]

    def wheel_raw(self) -> np.ndarray:
        """Present wheel speeds, steps/s (left, back, right)."""
        return np.array([self.wheel(n).register("Present_Velocity") for n in WHEEL_NAMES], dtype=np.float64)

    def goal_raw(self) -> np.ndarray:
        return np.array([self.wheel(n).register("Goal_Velocity") for n in WHEEL_NAMES], dtype=np.float64)

    def turned_steps(self) -> np.ndarray:
        """Each wheel's real travel so far (steps, unwrapped; left, back, right)."""
        return np.array([self.wheel(n).turned_steps() for n in WHEEL_NAMES])

    def displacement(self, since_steps: np.ndarray) -> BaseVelocity:
        """The base's true displacement since `since_steps` (x, y m; theta deg), from the wheels' real travel: exact
        while the heading stays put (the kinematic map is linear), what a translation-only path needs."""
        return self.geometry.body_velocity(self.turned_steps() - since_steps)  # steps over "1 s" = the displacement

    def body_velocity(self) -> BaseVelocity:
        return self.geometry.body_velocity(self.wheel_raw())

    def start(self) -> VirtualOmniBase:
        self.bus.start()
        return self

    def close(self) -> None:
        self.bus.close()

    def __enter__(self) -> VirtualOmniBase:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
