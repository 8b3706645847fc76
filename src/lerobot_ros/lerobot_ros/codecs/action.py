"""The per-tick action message of a controller (policy_node): one message, refilled in place each tick.

publish() serializes at once, so one message can carry every tick. Right after inference (caches full of
image tensors) building a fresh message with its layout costs about a tenth of a millisecond of the
tick's latency; refilling only the values (and the stamp) does not.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs.arrays import float64_array, numpy_to_float64_multi_array
from lerobot_ros.codecs.joint_state import numpy_to_joint_state
from lerobot_ros.codecs.time import NS_PER_S

ACTION_MESSAGES = {"commands": Float64MultiArray, "joint_state": JointState}


class ActionEncoder:
    """`encode(values, t_ns)` -> the reused Float64MultiArray ("commands") or JointState ("joint_state")."""

    def __init__(self, mode: str, joint_names: Sequence[str]):
        if mode not in ACTION_MESSAGES:
            raise ValueError(f"no per-tick action message for mode {mode!r}; use one of {sorted(ACTION_MESSAGES)}")
        self.commands = mode == "commands"
        self.joint_names = list(joint_names)
        self._msg = None

    def encode(self, values: np.ndarray | Sequence[float], t_ns: int):
        """The message holding `values` (ROS units: an array, or a list of floats as `Feature.to_ros_values`
        gives), stamped `t_ns` (JointState); the same object every call."""
        msg = self._msg
        if msg is None or len(msg.data if self.commands else msg.position) != len(values):
            if self.commands:
                msg = numpy_to_float64_multi_array(values)
            else:
                msg = numpy_to_joint_state(self.joint_names, position=values, stamp_ns=t_ns)
            self._msg = msg
            return msg
        if self.commands:
            msg.data = float64_array(values)
        else:
            msg.position = float64_array(values)
            stamp = msg.header.stamp
            stamp.sec, stamp.nanosec = divmod(int(t_ns), NS_PER_S)  # in place: no Time per tick
        return msg
