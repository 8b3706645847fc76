"""The QoS profiles the project uses, named for what they are for."""

from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
)

#: Camera frames and joint states: keep last 5, best effort. A slow subscriber never stalls a driver,
#: and a best-effort subscription also receives from reliable publishers.
SENSOR_QOS: QoSProfile = qos_profile_sensor_data

#: Commands and anything that must arrive in order: reliable, keep last 10.
RELIABLE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)

#: Latched values (task description, robot_description): late joiners get the last message.
LATCHED_QOS = QoSProfile(
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
)

#: Latched with a short history (episode status): late joiners get the last few messages.
LATCHED_HISTORY_QOS = QoSProfile(
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
)

#: Recording and lockstep evaluation: reliable and deep, so bursts are queued rather than dropped.
RECORDING_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)

PROFILES = {"sensor": SENSOR_QOS, "reliable": RELIABLE_QOS, "latched": LATCHED_QOS, "recording": RECORDING_QOS}


def qos_by_name(name: str) -> QoSProfile:
    """Look up a profile by its short name (sensor, reliable, latched, recording)."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown QoS profile {name!r}; use one of {sorted(PROFILES)}") from None
