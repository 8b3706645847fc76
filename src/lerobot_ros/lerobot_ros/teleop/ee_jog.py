"""Tool-tip jogging through the URDF: a Cartesian step of the tip becomes joint targets (damped least squares).

Joint values here are in this project's ROS units (radians, 0 at the middle of each joint's range, as on
`joint_states` and `commands`); the URDF's own values differ by each joint's mid-range
(`viz.joint_zero_offsets`). Only the tip's position is controlled (the SO-101 has 5 arm joints for 3
coordinates): the damped least-squares step is the smallest joint motion that moves the tip, so the wrist
keeps its pose unless it must move. Targets stay inside the joint limits (the URDF's, narrowed by calibrated
ranges when given), and no joint moves more than `max_joint_step` per call: an unreachable target is
approached as far as the limits allow and the arm never jumps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lerobot_ros.viz.chunk_markers import joint_zero_offsets
from lerobot_ros.viz.urdf_kinematics import UrdfError, UrdfModel

GRIPPER_NAMES = ("gripper",)


@dataclass(frozen=True)
class JogLimits:
    """Per-joint bounds in ROS units (radians, mid-range zero), in the order of `joint_names`."""

    lower: np.ndarray
    upper: np.ndarray

    def clip(self, q: np.ndarray) -> np.ndarray:
        return np.clip(q, self.lower, self.upper)


class EndEffectorJog:
    """Moves a tool tip by Cartesian steps; `step()` returns the next joint targets."""

    def __init__(
        self,
        model: UrdfModel,
        tip: str,
        joint_names: Sequence[str],
        *,
        joint_zero: str = "mid_range",
        lower: Sequence[float] | None = None,
        upper: Sequence[float] | None = None,
        max_joint_step: float = 0.05,
        damping: float = 0.01,
        iterations: int = 4,
    ):
        self.model, self.tip = model, tip
        self.joint_names = list(joint_names)
        chain_links = set(model.chain(tip))  # raises UrdfError naming the links when `tip` is unknown
        self.offsets = joint_zero_offsets(model, joint_zero)
        missing = [n for n in self.joint_names if n not in model.joints]
        if missing:
            raise UrdfError(f"joints {missing} are not in the URDF {model.name!r} (its joints: {model.movable_joints})")
        self.arm = [
            i
            for i, n in enumerate(self.joint_names)
            if model.joints[n].movable and model.joints[n].child in chain_links and n not in GRIPPER_NAMES
        ]
        if len(self.arm) < 3:
            raise UrdfError(
                f"the chain to {tip!r} has {len(self.arm)} movable joints of {self.joint_names}; "
                "moving a tip in 3-D needs at least 3"
            )
        self.gripper = next((i for i, n in enumerate(self.joint_names) if n in GRIPPER_NAMES), None)
        self.limits = self._limits(lower, upper)
        self.max_joint_step, self.damping, self.iterations = float(max_joint_step), float(damping), int(iterations)

    def _limits(self, lower, upper) -> JogLimits:
        lo: Any  # lists of floats, then arrays
        hi: Any
        lo, hi = [], []
        for n in self.joint_names:
            j = self.model.joints[n]
            off = self.offsets.get(n, 0.0)
            lo.append(-np.inf if j.lower is None or j.type == "continuous" else j.lower - off)
            hi.append(np.inf if j.upper is None or j.type == "continuous" else j.upper - off)
        lo, hi = np.array(lo), np.array(hi)
        if lower is not None:
            lo = np.maximum(lo, np.asarray(lower, dtype=np.float64))
        if upper is not None:
            hi = np.minimum(hi, np.asarray(upper, dtype=np.float64))
        if np.any(lo > hi):
            bad = [n for n, a, b in zip(self.joint_names, lo, hi) if a > b]
            raise ValueError(f"joint limits leave no range for {bad}: check the calibrated ranges")
        return JogLimits(lo, hi)

    def tip_positions(self, q: np.ndarray) -> np.ndarray:
        """(T, 3) tip positions in the URDF root frame for (T, D) joint values in ROS units."""
        q = np.atleast_2d(np.asarray(q, dtype=np.float64))
        values = {n: q[:, i] + self.offsets.get(n, 0.0) for i, n in enumerate(self.joint_names)}
        return self.model.forward_kinematics(values)[self.tip][:, :3, 3]

    def tip_position(self, q) -> np.ndarray:
        return self.tip_positions(q)[0]

    def step(
        self, q: Sequence[float] | np.ndarray, delta_xyz: Sequence[float] | np.ndarray, gripper_delta: float = 0.0
    ) -> np.ndarray:
        """Joint targets that move the tip by `delta_xyz` (metres, root frame) from pose `q`; gripper by its delta."""
        q0 = self.limits.clip(np.asarray(q, dtype=np.float64))
        delta = np.asarray(delta_xyz, dtype=np.float64)
        out = q0.copy()
        if np.any(delta != 0.0):
            out = self._reachable_step(q0, delta)
        if self.gripper is not None and gripper_delta:
            out[self.gripper] = q0[self.gripper] + float(gripper_delta)
        step = np.clip(out - q0, -self.max_joint_step, self.max_joint_step)
        return self.limits.clip(q0 + step)

    def _reachable_step(self, q0: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """The largest part of `delta` (1, 1/2, 1/4, 1/8) the arm reaches within tolerance; else no motion.

        Near the edge of the workspace or a joint limit, least squares would trade the commanded direction for
        another one (a stretched arm asked to reach further drops its tip); stopping short keeps the tip on the
        commanded line, so an unreachable target is clamped to the nearest reachable point on the way."""
        start = self.tip_position(q0)
        for fraction in (1.0, 0.5, 0.25, 0.125):
            goal = start + fraction * delta
            q = self._solve(q0, goal)
            if np.linalg.norm(self.tip_position(q) - goal) <= 0.1 * fraction * np.linalg.norm(delta) + 1e-5:
                return q
        return q0

    def _solve(self, q0: np.ndarray, goal: np.ndarray) -> np.ndarray:
        q = q0.copy()
        arm = self.arm
        eps = 1e-6
        lam2 = self.damping**2
        for _ in range(self.iterations):
            probes = np.repeat(q[None, :], len(arm) + 1, axis=0)
            probes[np.arange(1, len(arm) + 1), arm] += eps
            tips = self.tip_positions(probes)  # one batched FK: the pose and each joint nudged
            err = goal - tips[0]
            if np.linalg.norm(err) < 1e-5:
                break
            jac = (tips[1:] - tips[0]).T / eps  # (3, n)
            dq = jac.T @ np.linalg.solve(jac @ jac.T + lam2 * np.eye(3), err)
            q[arm] = self.limits.clip(q + _scatter(len(q), arm, dq))[arm]
        return q


def _scatter(size: int, index: list[int], values: np.ndarray) -> np.ndarray:
    out = np.zeros(size)
    out[index] = values
    return out
