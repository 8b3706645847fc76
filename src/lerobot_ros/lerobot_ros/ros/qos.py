"""The rclpy QoS profiles the project uses, named for what they are for (numbers: `lerobot_ros.conventions.qos`)."""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from lerobot_ros.codecs.time import split_ns
from lerobot_ros.conventions.qos import PROFILE_NAMES, QOS_SPECS, QosSpec


def profile(spec: QosSpec) -> QoSProfile:
    """The rclpy profile of a `QosSpec` (keep last `depth`)."""
    return QoSProfile(
        depth=spec.depth,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE if spec.reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if spec.latched else DurabilityPolicy.VOLATILE,
    )


#: Camera frames and joint states: keep last 5, best effort (rclpy's qos_profile_sensor_data). A slow
#: subscriber never stalls a driver, and a best-effort subscription also receives from reliable publishers.
SENSOR_QOS = profile(QOS_SPECS["sensor"])
#: Commands and anything that must arrive in order: reliable, keep last 10.
RELIABLE_QOS = profile(QOS_SPECS["reliable"])
#: Latched values (task description, robot_description): late joiners get the last message.
LATCHED_QOS = profile(QOS_SPECS["latched"])
#: episode_status as the sim bridge publishes it (and a late joiner that needs only the last few reads it).
EPISODE_STATUS_QOS = profile(QOS_SPECS["episode_status"])
#: Recording and lockstep evaluation: reliable and deep, so bursts are queued rather than dropped.
RECORDING_QOS = profile(QOS_SPECS["recording"])
#: An evaluator following episode_status: deep (no status of a lockstep episode lost) and latched (one that
#: attaches late still learns whether an episode is running).
STATUS_FOLLOWER_QOS = profile(QOS_SPECS["status_follower"])

#: the profiles a contract feature may name
PROFILES = {name: profile(QOS_SPECS[name]) for name in PROFILE_NAMES}


def qos_by_name(name: str) -> QoSProfile:
    """Look up a profile by its short name (sensor, reliable, latched, recording)."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown QoS profile {name!r}; use one of {sorted(PROFILES)}") from None


def subscription_qos(offered: list[QoSProfile]) -> QoSProfile:
    """A recorder's subscription matching every publisher: reliable / transient local only when all of them
    offer it (else a publisher would not match), as deep as RECORDING_QOS."""
    reliable = bool(offered) and all(p.reliability == ReliabilityPolicy.RELIABLE for p in offered)
    latched = bool(offered) and all(p.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in offered)
    return profile(QosSpec(depth=RECORDING_QOS.depth, reliable=reliable, latched=latched))


def to_bag_qos(qos: QoSProfile):
    """rclpy QoSProfile -> the rosbags `Qos` written into a bag's offered_qos_profiles."""
    from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

    def qtime(duration) -> QosTime:
        return QosTime(*split_ns(duration.nanoseconds))

    return Qos(
        QosHistory(int(qos.history)),
        int(qos.depth),
        QosReliability(int(qos.reliability)),
        QosDurability(int(qos.durability)),
        qtime(qos.deadline),
        qtime(qos.lifespan),
        QosLiveliness(int(qos.liveliness)),
        qtime(qos.liveliness_lease_duration),
        bool(qos.avoid_ros_namespace_conventions),
    )
