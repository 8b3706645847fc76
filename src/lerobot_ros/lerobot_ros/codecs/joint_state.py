"""sensor_msgs/JointState <-> numpy, by joint name in a requested order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sensor_msgs.msg import JointState

from lerobot_ros.codecs.arrays import float64_array
from lerobot_ros.codecs.cdr import JointStateView, read_joint_state, read_or_deserialize
from lerobot_ros.codecs.errors import CodecError
from lerobot_ros.codecs.time import ns_to_time

_FIELDS = ("position", "velocity", "effort")


def joint_state_to_numpy(msg, names: Sequence[str], field: str = "position") -> np.ndarray:
    """Values of `field` for `names`, in that order (float64). Raises CodecError naming missing joints."""
    return np.asarray(joint_state_values(msg, names, field), dtype=np.float64)


def joint_state_values(msg, names: Sequence[str], field: str = "position") -> list[float]:
    """`joint_state_to_numpy` as a list of floats, without numpy: the per-tick path of a controller, where a
    numpy call on six values costs more than the values are worth (see contract.transforms.ElementwisePath)."""
    if field not in _FIELDS:
        raise CodecError(f"JointState has no field {field!r}; use one of {_FIELDS}")
    raw = getattr(msg, field)
    values = raw.tolist() if hasattr(raw, "tolist") else [float(v) for v in raw]  # array.array / numpy / list
    msg_names = msg.name if isinstance(msg.name, list) else list(msg.name)
    if len(values) != len(msg_names):
        raise CodecError(f"JointState has {len(msg_names)} names but {len(values)} {field} values")
    if msg_names == names or msg_names == list(names):
        return values
    index = {n: i for i, n in enumerate(msg_names)}
    missing = [n for n in names if n not in index]
    if missing:
        raise CodecError(f"JointState lacks joint(s) {missing}; it has {msg_names}")
    return [values[index[n]] for n in names]


def joint_state_from_cdr(raw) -> JointStateView | JointState:
    """The JointState of a `raw=True` subscription's bytes, for the per-tick path: codecs.cdr reads plain CDR
    with `struct` (no message object); another CDR flavour goes through rclpy's deserializer. CodecError when
    the bytes are malformed."""
    return read_or_deserialize(raw, read_joint_state, JointState)


def numpy_to_joint_state(
    names: Sequence[str],
    position=None,
    velocity=None,
    effort=None,
    stamp_ns: int | None = None,
    frame_id: str = "",
) -> JointState:
    """A JointState for `names`; each given field must have one value per name."""
    msg = JointState()
    if stamp_ns is not None:
        msg.header.stamp = ns_to_time(stamp_ns)
    msg.header.frame_id = frame_id
    msg.name = list(names)
    for field, values in zip(_FIELDS, (position, velocity, effort)):
        if values is None:
            continue
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if values.size != len(msg.name):
            raise CodecError(f"{field} has {values.size} values for {len(msg.name)} joints")
        setattr(msg, field, float64_array(values))
    return msg
