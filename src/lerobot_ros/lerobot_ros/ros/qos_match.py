"""QoS for a recorder that subscribes to whatever is published: matched to the publishers, and written
into the bag as the profiles they offered (so `ros2 bag play` republishes with the same QoS)."""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

from lerobot_ros.codecs.time import NS_PER_S

RECORDER_DEPTH = 1000  # deep: bursts (camera frames while the writer flushes) are queued, not dropped


def _qtime(duration) -> QosTime:
    sec, nsec = divmod(int(duration.nanoseconds), NS_PER_S)
    return QosTime(sec, nsec)


def to_bag_qos(profile: QoSProfile) -> Qos:
    """rclpy QoSProfile -> the rosbags Qos written as offered_qos_profiles."""
    return Qos(
        QosHistory(int(profile.history)), int(profile.depth), QosReliability(int(profile.reliability)),
        QosDurability(int(profile.durability)), _qtime(profile.deadline), _qtime(profile.lifespan),
        QosLiveliness(int(profile.liveliness)), _qtime(profile.liveliness_lease_duration),
        bool(profile.avoid_ros_namespace_conventions),
    )


def subscription_qos(offered: list[QoSProfile]) -> QoSProfile:
    """Reliable / transient-local only when every publisher offers it (else a publisher would not match)."""
    reliable = bool(offered) and all(p.reliability == ReliabilityPolicy.RELIABLE for p in offered)
    latched = bool(offered) and all(p.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in offered)
    return QoSProfile(
        depth=RECORDER_DEPTH, history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
    )
