"""nav_msgs/Odometry of a planar base: pose in the odom frame, twist in the base frame (REP 105)."""

from __future__ import annotations

import math

from lerobot_ros.codecs.time import set_stamp


def fill_planar_odometry(msg, stamp_ns: int, x: float, y: float, yaw: float, vx: float, vy: float, wz: float):
    """Write a planar pose (m, m, rad) and body twist (m/s, m/s, rad/s) into an Odometry message (frames as set
    by the caller, reused between calls); returns it."""
    set_stamp(msg.header.stamp, stamp_ns)
    msg.pose.pose.position.x, msg.pose.pose.position.y = float(x), float(y)
    msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    msg.twist.twist.linear.x, msg.twist.twist.linear.y = float(vx), float(vy)
    msg.twist.twist.angular.z = float(wz)
    return msg


def odometry_yaw(msg) -> float:
    """The yaw (rad) of an Odometry message's yaw-only orientation."""
    q = msg.pose.pose.orientation
    return 2 * math.atan2(q.z, q.w)
