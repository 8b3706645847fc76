"""Serialized ROS messages (CDR, built with rosbags' Kilted typestore) for writer tests that bypass rclpy: a joint state and an image per index, and the sensor-data QoS the recorder writes."""

from __future__ import annotations

import numpy as np
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.typesys import Stores, get_typestore

TS = get_typestore(Stores.ROS2_KILTED)


JS = "sensor_msgs/msg/JointState"


IMG = "sensor_msgs/msg/Image"


SENSOR = Qos(
    QosHistory.KEEP_LAST,
    5,
    QosReliability.BEST_EFFORT,
    QosDurability.VOLATILE,
    QosTime(0, 0),
    QosTime(0, 0),
    QosLiveliness.AUTOMATIC,
    QosTime(0, 0),
    False,
)


def joint_state(i: int) -> bytes:
    t = TS.types
    msg = t[JS](
        header=t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=i, nanosec=7), frame_id="base"),
        name=["a", "b"],
        position=np.array([i, -i], dtype=np.float64),
        velocity=np.array([], dtype=np.float64),
        effort=np.array([], dtype=np.float64),
    )
    return bytes(TS.serialize_cdr(msg, JS))


def image(i: int, h: int = 48, w: int = 64) -> bytes:
    t = TS.types
    data = np.full(h * w * 3, i % 256, dtype=np.uint8)
    msg = t[IMG](
        header=t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=i, nanosec=0), frame_id="cam"),
        height=h,
        width=w,
        encoding="rgb8",
        is_bigendian=0,
        step=w * 3,
        data=data,
    )
    return bytes(TS.serialize_cdr(msg, IMG))
