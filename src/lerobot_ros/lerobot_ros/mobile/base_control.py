"""What stands between a `cmd_vel` Twist and a mobile base's wheels, and what comes back as odometry.

`CommandGate`: a command is checked (finite numbers) and kept with its arrival time; once none has come for
`timeout_s` the target is zero, so a dead teleop or planner stops the base. `VelocityShaper`: the target is
clamped to the speed limits (the linear part scaled as a vector, so the direction holds) and approached at
most at the acceleration limits per tick, as nav2's velocity_smoother does. `Odometry2D`: the pose in the
odom frame (REP 105) integrated from measured body velocities, exact for a constant twist over a tick.
No ROS and no bus here: hardware.wheel_base runs them, tests feed them directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lerobot_ros.mobile.omni import BaseVelocity

ZERO = BaseVelocity()


@dataclass(frozen=True)
class BaseLimits:
    max_linear_mps: float = 0.4  # LeRobot's LeKiwi keyboard teleop: 0.4 m/s at its fastest
    max_angular_degps: float = 90.0
    max_linear_accel: float = 1.0  # m/s^2
    max_angular_accel: float = 360.0  # deg/s^2


def invalid_reason(v: BaseVelocity) -> str | None:
    """Why a commanded velocity cannot be obeyed (NaN or infinite component), or None."""
    bad = [n for n, x in v.as_lerobot().items() if not math.isfinite(x)]
    return f"non-finite {', '.join(bad)}" if bad else None


class CommandGate:
    """The latest valid command and when it came; zero once it is older than `timeout_s`."""

    def __init__(self, timeout_s: float):
        self.timeout_s = float(timeout_s)
        self.command = ZERO
        self.received_at: float | None = None
        self.rejected = 0
        self.last_rejection = ""

    def offer(self, v: BaseVelocity, now: float) -> str | None:
        """Take `v` as the command; a bad one is refused (the reason returned) and stops the base."""
        reason = invalid_reason(v)
        if reason is not None:
            self.rejected += 1
            self.last_rejection = reason
            self.command, self.received_at = ZERO, now  # a broken sender: stop now, not after the timeout
            return reason
        self.command, self.received_at = v, now
        return None

    def stale(self, now: float) -> bool:
        return self.received_at is None or now - self.received_at > self.timeout_s

    def target(self, now: float) -> BaseVelocity:
        return ZERO if self.stale(now) else self.command


class VelocityShaper:
    """Speed limits on the target, acceleration limits on the way there."""

    def __init__(self, limits: BaseLimits):
        self.limits = limits
        self.current = ZERO
        self.clamped = 0  # targets beyond the speed limits (clamped, counted for /diagnostics)

    def clamp(self, v: BaseVelocity) -> BaseVelocity:
        lim = self.limits
        speed = math.hypot(v.x, v.y)
        scale = lim.max_linear_mps / speed if speed > lim.max_linear_mps else 1.0
        theta = max(-lim.max_angular_degps, min(lim.max_angular_degps, v.theta_degps))
        if scale < 1.0 or theta != v.theta_degps:
            self.clamped += 1
        return BaseVelocity(v.x * scale, v.y * scale, theta)

    def step(self, target: BaseVelocity, dt: float) -> BaseVelocity:
        """The velocity to command this tick: toward the clamped `target`, at most the acceleration limits."""
        goal = self.clamp(target)
        cur, lim = self.current, self.limits
        dx, dy = goal.x - cur.x, goal.y - cur.y
        dv = math.hypot(dx, dy)
        max_dv = lim.max_linear_accel * max(dt, 0.0)
        k = max_dv / dv if dv > max_dv else 1.0
        max_dw = lim.max_angular_accel * max(dt, 0.0)
        dw = max(-max_dw, min(max_dw, goal.theta_degps - cur.theta_degps))
        self.current = BaseVelocity(cur.x + dx * k, cur.y + dy * k, cur.theta_degps + dw)
        return self.current

    def reset(self) -> None:
        self.current = ZERO


class Odometry2D:
    """Pose (x, y in m, yaw in rad) of base_link in odom, from body velocities held over each interval."""

    def __init__(self):
        self.x = self.y = self.yaw = 0.0
        self.distance = 0.0  # path length, m

    def update(self, v: BaseVelocity, dt: float) -> None:
        if dt <= 0:
            return
        w = v.wz_radps
        dth = w * dt
        if abs(dth) < 1e-9:  # straight: the body frame does not turn over the interval
            fx, fy = v.x * dt, v.y * dt
        else:  # constant twist: the body moves on an arc; integrate the rotating body velocity exactly
            s, c = math.sin(dth), math.cos(dth)
            fx = (v.x * s - v.y * (1.0 - c)) / w
            fy = (v.x * (1.0 - c) + v.y * s) / w
        cy, sy = math.cos(self.yaw), math.sin(self.yaw)
        self.x += cy * fx - sy * fy
        self.y += sy * fx + cy * fy
        self.yaw = math.atan2(math.sin(self.yaw + dth), math.cos(self.yaw + dth))
        self.distance += math.hypot(v.x, v.y) * dt
