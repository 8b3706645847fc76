"""Kinematics of a three-omniwheel base (LeKiwi): body velocities <-> wheel speeds, in LeRobot's units.

The geometry and the raw units are LeRobot's (`lerobot.robots.lekiwi.LeKiwi`): wheels at 240, 0 and 120
degrees less 90 (left, back, right), 0.05 m wheel radius, 0.125 m from the centre, wheel speed in
servo steps/s (4096 steps a turn), and a command whose fastest wheel exceeds `max_raw` scaled down as a
whole, so the base keeps its direction. Body velocities are REP 103 (x forward, y left, counter-clockwise
positive); LeRobot's `theta.vel` is deg/s, ROS's Twist is rad/s: the functions here take and give deg/s
like LeRobot, `BaseVelocity` converts. Tested against LeRobot's own functions (tests/unit/test_omni_base.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

STEPS_PER_DEG = 4096.0 / 360.0
WHEEL_NAMES = ("base_left_wheel", "base_back_wheel", "base_right_wheel")
#: LeRobot's lekiwi state/action names of the base, in its units (m/s, m/s, deg/s)
BASE_FEATURES = ("x.vel", "y.vel", "theta.vel")


@dataclass(frozen=True)
class BaseVelocity:
    """A body velocity: x, y in m/s, theta in deg/s (LeRobot's x.vel, y.vel, theta.vel)."""

    x: float = 0.0
    y: float = 0.0
    theta_degps: float = 0.0

    @classmethod
    def from_twist(cls, vx: float, vy: float, wz_radps: float) -> BaseVelocity:
        return cls(float(vx), float(vy), math.degrees(float(wz_radps)))

    @property
    def wz_radps(self) -> float:
        return math.radians(self.theta_degps)

    def as_lerobot(self) -> dict[str, float]:
        return dict(zip(BASE_FEATURES, (self.x, self.y, self.theta_degps)))


@dataclass(frozen=True)
class OmniGeometry:
    wheel_radius_m: float = 0.05
    base_radius_m: float = 0.125
    wheel_angles_deg: tuple[float, float, float] = (240.0, 0.0, 120.0)  # left, back, right; less 90 below
    max_raw: int = 3000  # steps/s: LeRobot's cap on the fastest wheel
    _m: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        angles = np.radians(np.asarray(self.wheel_angles_deg) - 90.0)
        m = np.column_stack([np.cos(angles), np.sin(angles), np.full(3, self.base_radius_m)])
        object.__setattr__(self, "_m", m)

    def wheel_degps(self, v: BaseVelocity) -> np.ndarray:
        """Wheel speeds (deg/s, left/back/right) for body velocity `v`, uncapped."""
        body = np.array([v.x, v.y, math.radians(v.theta_degps)])
        return np.degrees(self._m @ body / self.wheel_radius_m)

    def wheel_raw(self, v: BaseVelocity) -> np.ndarray:
        """Goal_Velocity per wheel (int steps/s), the whole command scaled down when a wheel exceeds max_raw:
        what LeKiwi._body_to_wheel_raw writes."""
        degps = self.wheel_degps(v)
        fastest = float(np.max(np.abs(degps))) * STEPS_PER_DEG
        if fastest > self.max_raw:
            degps = degps * (self.max_raw / fastest)
        return np.clip(np.round(degps * STEPS_PER_DEG), -0x8000, 0x7FFF).astype(np.int64)

    def body_velocity(self, wheel_raw) -> BaseVelocity:
        """Body velocity from the wheels' Present_Velocity (steps/s): LeKiwi._wheel_raw_to_body."""
        linear = np.radians(np.asarray(wheel_raw, dtype=np.float64) / STEPS_PER_DEG) * self.wheel_radius_m
        x, y, theta = np.linalg.solve(self._m, linear)
        return BaseVelocity(float(x), float(y), math.degrees(float(theta)))
