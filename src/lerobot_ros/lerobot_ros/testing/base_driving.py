"""Driving a mobile base over cmd_vel in tests as a teleop or a simple planner would, reading odom back: shared by
the tests of base_node (emulated wheels) and of the LeKiwi twin (MuJoCo)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry


def twist(x=0.0, y=0.0, wz=0.0) -> Twist:
    msg = Twist()
    msg.linear.x, msg.linear.y, msg.angular.z = float(x), float(y), float(wz)
    return msg


def odom_pose(msg: Odometry) -> tuple[float, float, float]:
    """(x, y, yaw) of an Odometry message (a yaw-only quaternion)."""
    p = msg.pose.pose
    return p.position.x, p.position.y, 2 * math.atan2(p.orientation.z, p.orientation.w)


def odom_speed(msg: Odometry) -> float:
    t = msg.twist.twist
    return math.hypot(t.linear.x, t.linear.y) + abs(t.angular.z)


def drive_until(publish: Callable[[Twist], None], msg: Twist, until, timeout: float = 20.0) -> None:
    """Publish `msg` at 20 Hz until `until()` holds."""
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, "the base did not get there"
        publish(msg)
        time.sleep(0.05)


def go_to(publish, pose: Callable[[], tuple[float, float, float]], goal, timeout: float = 60.0, tol: float = 0.005):
    """Drive to `goal` (odom frame) as a simple planner would: straight at it, slowing near it (0.2 m/s down to
    0.03 m/s), commands at 20 Hz, until odometry says within `tol`."""
    deadline = time.monotonic() + timeout
    while True:
        x, y, yaw = pose()
        dx, dy = goal[0] - x, goal[1] - y
        dist = math.hypot(dx, dy)
        if dist < tol:
            return
        assert time.monotonic() < deadline, f"the base did not reach {goal} (at {x:.3f}, {y:.3f})"
        speed = min(0.2, max(0.03, 1.5 * dist)) / dist
        bx, by = math.cos(yaw) * dx + math.sin(yaw) * dy, -math.sin(yaw) * dx + math.cos(yaw) * dy
        publish(twist(bx * speed, by * speed))
        time.sleep(0.05)
