"""The per-tick action message of a controller (policy_node), as the CDR bytes `Publisher.publish` sends as-is.

Right after inference (caches full of image tensors) building a message object and having rclpy convert it cost
~0.1 ms of the tick's latency; a constant prefix (the layout, or the joint names) plus the tick's doubles costs
a few microseconds (codecs.cdr). Subscribers receive an ordinary Float64MultiArray / JointState.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs.cdr import Float64MultiArrayCdr, JointStateCdr

ACTION_MESSAGES = {"commands": Float64MultiArray, "joint_state": JointState}


class ActionEncoder:
    """`encode(values, t_ns)` -> serialized Float64MultiArray ("commands": one layout dimension "dim0") or
    JointState ("joint_state": the joint names, positions, stamped `t_ns`)."""

    def __init__(self, mode: str, joint_names: Sequence[str]):
        if mode not in ACTION_MESSAGES:
            raise ValueError(f"no per-tick action message for mode {mode!r}; use one of {sorted(ACTION_MESSAGES)}")
        self.joint_names = list(joint_names)
        self._layouts: dict[int, Float64MultiArrayCdr] = {}  # "commands": one per vector size
        self._joint_state = JointStateCdr(self.joint_names) if mode == "joint_state" else None

    def encode(self, values: np.ndarray | Sequence[float], t_ns: int) -> bytes:
        """The message holding `values` (ROS units: a list of floats as `Feature.to_ros_values` gives, or an
        array). Raises CodecError when a JointState's values do not match its joints."""
        flat = (
            np.asarray(values, dtype=np.float64).reshape(-1).tolist()
            if isinstance(values, np.ndarray)
            else list(values)
        )
        if self._joint_state is not None:
            return self._joint_state.encode(flat, t_ns)
        layout = self._layouts.get(len(flat))
        if layout is None:
            layout = self._layouts[len(flat)] = Float64MultiArrayCdr([("dim0", len(flat), len(flat))], len(flat))
        return layout.encode(flat)
