"""QoS profiles by purpose, as plain numbers (no rclpy): one table for live topics and bag metadata.

`lerobot_ros.ros.qos` builds the rclpy profiles from it; `lerobot_ros.bag` writes the same values into
a bag's `offered_qos_profiles` (what `ros2 bag play` offers on replay); contracts name a profile by its
key. All profiles keep the last `depth` messages (KEEP_LAST).
"""

from __future__ import annotations

from typing import NamedTuple


class QosSpec(NamedTuple):
    depth: int
    reliable: bool  # False: best effort
    latched: bool = False  # True: transient local (late joiners get the last `depth` messages)


QOS_SPECS: dict[str, QosSpec] = {
    # camera frames and joint states: a slow subscriber never stalls a driver (rclpy's qos_profile_sensor_data)
    "sensor": QosSpec(depth=5, reliable=False),
    # commands and anything that must arrive in order
    "reliable": QosSpec(depth=10, reliable=True),
    # a value late joiners need (task description, robot_description)
    "latched": QosSpec(depth=1, reliable=True, latched=True),
    # episode_status as the sim bridge publishes it: late joiners get the last few statuses
    "episode_status": QosSpec(depth=10, reliable=True, latched=True),
    # recording and lockstep evaluation: deep, so bursts are queued rather than dropped
    "recording": QosSpec(depth=1000, reliable=True),
    # an evaluator following episode_status: deep like recording (no status of a lockstep episode is lost)
    # and latched, so one that attaches late still gets the bridge's last statuses
    "status_follower": QosSpec(depth=1000, reliable=True, latched=True),
}

#: the names a contract feature may give as `qos`
PROFILE_NAMES: tuple[str, ...] = ("sensor", "reliable", "latched", "recording")
