"""trajectory_msgs/JointTrajectory <-> an action chunk (T x D numpy array with per-point times)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from lerobot_ros.codecs.arrays import float64_array
from lerobot_ros.codecs.errors import CodecError
from lerobot_ros.codecs.time import NS_PER_S, duration_to_ns, ns_to_duration, ns_to_time


def chunk_to_joint_trajectory(
    names: Sequence[str],
    chunk,
    fps: float,
    stamp_ns: int | None = None,
    start_offset_s: float | None = None,
    frame_id: str = "",
) -> JointTrajectory:
    """A JointTrajectory whose point i is chunk[i] at time_from_start (i + 1) / fps (or offset + i / fps).

    The first action of a chunk is meant for the next control tick, hence the default offset of 1/fps.
    """
    chunk = np.asarray(chunk, dtype=np.float64)
    if chunk.ndim == 1:
        chunk = chunk[None, :]
    if chunk.ndim != 2 or chunk.shape[1] != len(names):
        raise CodecError(f"chunk of shape {chunk.shape} does not match {len(names)} joint names")
    if fps <= 0:
        raise CodecError(f"fps must be positive, got {fps}")
    offset_ns = NS_PER_S / fps if start_offset_s is None else start_offset_s * NS_PER_S
    msg = JointTrajectory()
    if stamp_ns is not None:
        msg.header.stamp = ns_to_time(stamp_ns)
    msg.header.frame_id = frame_id
    msg.joint_names = list(names)
    for i, row in enumerate(chunk):
        point = JointTrajectoryPoint()
        point.positions = float64_array(row)
        point.time_from_start = ns_to_duration(int(round(offset_ns + i * NS_PER_S / fps)))
        msg.points.append(point)
    return msg


def joint_trajectory_to_chunk(msg, names: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(times_ns (T,), positions (T, D)) of a JointTrajectory, columns reordered to `names` if given."""
    msg_names = list(msg.joint_names)
    if names is None:
        order = list(range(len(msg_names)))
    else:
        index = {n: i for i, n in enumerate(msg_names)}
        missing = [n for n in names if n not in index]
        if missing:
            raise CodecError(f"JointTrajectory lacks joint(s) {missing}; it has {msg_names}")
        order = [index[n] for n in names]
    times = np.empty(len(msg.points), dtype=np.int64)
    positions = np.empty((len(msg.points), len(order)), dtype=np.float64)
    for i, point in enumerate(msg.points):
        values = np.asarray(point.positions, dtype=np.float64)
        if values.size != len(msg_names):
            raise CodecError(f"trajectory point {i} has {values.size} positions for {len(msg_names)} joints")
        positions[i] = values[order]
        times[i] = duration_to_ns(point.time_from_start)
    if times.size > 1 and np.any(np.diff(times) <= 0):
        raise CodecError("trajectory points must have strictly increasing time_from_start")
    return times, positions
