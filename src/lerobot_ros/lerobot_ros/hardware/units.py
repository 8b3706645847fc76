"""LeRobot motor values <-> ROS joint angles (radians, 0 at the middle of the calibrated range).

LeRobot reports a motor in degrees (`use_degrees=True`), in -100..100 or in 0..100 of its calibrated
range. All three are turned into the same thing on ROS topics: the angle from mid-range in radians,
computed from the calibration, so leader and follower agree whatever mode each uses. The calibrated
range is also the hard limit: `clip` keeps every goal inside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

DEGREES, RANGE_M100_100, RANGE_0_100 = "degrees", "range_m100_100", "range_0_100"


@dataclass(frozen=True)
class JointSpec:
    name: str
    mode: str
    range_min: int
    range_max: int
    max_res: int  # resolution - 1, as LeRobot's conversions use

    @property
    def rad_per_tick(self) -> float:
        return 2 * math.pi / self.max_res

    @property
    def half_range_ticks(self) -> float:
        return (self.range_max - self.range_min) / 2


class JointUnits:
    """Converts between LeRobot values (dict keyed by motor name) and radian arrays in joint order."""

    def __init__(self, specs: Sequence[JointSpec]):
        if not specs:
            raise ValueError("no joints to convert")
        for s in specs:
            if s.range_max <= s.range_min:
                raise ValueError(
                    f"calibration of {s.name!r} has range_min {s.range_min} >= range_max {s.range_max}; recalibrate the arm"
                )
            if s.mode not in (DEGREES, RANGE_M100_100, RANGE_0_100):
                raise ValueError(f"joint {s.name!r} uses unsupported normalisation {s.mode!r}")
        self.specs = list(specs)
        self.names = [s.name for s in specs]
        half = np.array([s.half_range_ticks * s.rad_per_tick for s in specs])
        self.lower, self.upper = -half, half
        # radians = (value - offset) * scale, per joint: one vector operation per conversion (hot loop).
        self._scale = np.array([_scale(s) for s in specs])
        self._offset = np.array([50.0 if s.mode == RANGE_0_100 else 0.0 for s in specs])
        self._keys: dict[str, list[str]] = {}

    @classmethod
    def from_bus(cls, bus) -> JointUnits:
        """From a connected or configured LeRobot MotorsBus with its calibration loaded."""
        specs = []
        for name, motor in bus.motors.items():
            cal = bus.calibration.get(name)
            if cal is None:
                raise ValueError(f"motor {name!r} has no calibration; pass a calibration file for this arm")
            specs.append(
                JointSpec(
                    name=name,
                    mode=motor.norm_mode.value,
                    range_min=int(cal.range_min),
                    range_max=int(cal.range_max),
                    max_res=int(bus.model_resolution_table[motor.model]) - 1,
                )
            )
        return cls(specs)

    def _keys_for(self, suffix: str) -> list[str]:
        keys = self._keys.get(suffix)
        if keys is None:
            keys = self._keys[suffix] = [n + suffix for n in self.names]
        return keys

    def to_radians(self, values: Mapping[str, float], suffix: str = "") -> np.ndarray:
        """Radians in joint order from LeRobot values (keys `name + suffix`, e.g. suffix=".pos")."""
        raw = np.fromiter((values[k] for k in self._keys_for(suffix)), dtype=np.float64, count=len(self.names))
        return (raw - self._offset) * self._scale

    def from_radians(self, radians, suffix: str = "") -> dict[str, float]:
        """LeRobot values (keys `name + suffix`) from radians in joint order, clipped to the calibrated range."""
        values = self.clip(radians) / self._scale + self._offset
        return dict(zip(self._keys_for(suffix), values.tolist()))

    def implausible(self, radians: np.ndarray) -> str | None:
        """Why a reading cannot be a real position (a joint far outside its calibrated range, NaN), else None.

        A servo can sit a little past the range its calibration recorded, so each end is widened by a quarter of
        the joint's upper limit (at least 0.35 rad); a garbled bus reply that still passed its checksum lands far outside
        (seen on an emulated bus under load: -39 rad) and must not be published as a joint state or action."""
        margin = np.maximum(0.35, 0.25 * self.upper)
        bad = ~np.isfinite(radians) | (radians < self.lower - margin) | (radians > self.upper + margin)
        if not bad.any():
            return None
        i = int(np.flatnonzero(bad)[0])
        return (
            f"implausible reading: {self.names[i]} at {radians[i]:.3g} rad, outside its calibrated range "
            f"{self.lower[i]:.2f}..{self.upper[i]:.2f} rad (a garbled bus reply?); the sample was dropped"
        )

    def clip(self, radians) -> np.ndarray:
        radians = np.asarray(radians, dtype=np.float64)
        if radians.shape != (len(self.specs),):
            raise ValueError(
                f"expected {len(self.specs)} joint values ({', '.join(self.names)}), got shape {radians.shape}"
            )
        if not np.isfinite(radians).all():
            raise ValueError("joint command contains NaN or infinite values")
        return np.minimum(np.maximum(radians, self.lower), self.upper)


def _scale(spec: JointSpec) -> float:
    """Radians per LeRobot unit for one joint."""
    if spec.mode == DEGREES:
        return math.pi / 180.0
    if spec.mode == RANGE_M100_100:
        return spec.half_range_ticks * spec.rad_per_tick / 100.0
    return 2 * spec.half_range_ticks * spec.rad_per_tick / 100.0
