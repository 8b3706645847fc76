"""std_msgs/Float64MultiArray <-> numpy, and fast float64 array.array construction for message fields."""

from __future__ import annotations

import array

import numpy as np
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

from lerobot_ros.codecs.errors import CodecError


def float64_array(values) -> array.array:
    """array.array('d') from any float sequence in one copy (skips rclpy's per-element field check); a flat list
    of floats (a tick's action from `Feature.to_ros_values`) goes in without numpy."""
    if isinstance(values, list):
        try:
            return array.array("d", values)
        except TypeError:  # nested rows: flattened by numpy below
            pass
    out = array.array("d")
    out.frombytes(np.ascontiguousarray(values, dtype=np.float64).reshape(-1).view(np.uint8))
    return out


def numpy_to_float64_multi_array(values, labels: list[str] | None = None) -> Float64MultiArray:
    """A Float64MultiArray holding `values` (any shape) with one layout dimension per axis."""
    values = np.asarray(values, dtype=np.float64)
    msg = Float64MultiArray()
    labels = labels or [f"dim{i}" for i in range(values.ndim)]
    if len(labels) != values.ndim:
        raise CodecError(f"{len(labels)} labels for an array with {values.ndim} dimension(s)")
    strides = np.cumprod([1, *values.shape[::-1]])[::-1][1:]
    for label, size, stride in zip(labels, values.shape, strides):
        msg.layout.dim.append(MultiArrayDimension(label=label, size=int(size), stride=int(stride * size)))
    msg.data = float64_array(values)
    return msg


def float64_multi_array_to_numpy(msg, expected_size: int | None = None) -> np.ndarray:
    """The data of a Float64MultiArray, shaped by its layout when it has one (after data_offset)."""
    data = np.asarray(msg.data, dtype=np.float64)
    offset = int(msg.layout.data_offset)
    dims = [int(d.size) for d in msg.layout.dim]
    if dims:
        count = int(np.prod(dims))
        if data.size < offset + count:
            raise CodecError(f"Float64MultiArray layout {dims} needs {offset + count} values, got {data.size}")
        data = data[offset : offset + count].reshape(dims)
    elif offset:
        data = data[offset:]
    if expected_size is not None and data.size != expected_size:
        raise CodecError(f"expected {expected_size} values, got {data.size}")
    return data
