"""LeKiwi's arm and base as one robot vector (hardware.lekiwi.RobotJoin, the logic of lekiwi_node's `robot` node)
without ROS: the state's order and units, commands split back, refusals, an operator's halves joined."""

from __future__ import annotations

import numpy as np
import pytest

from lerobot_ros.hardware.bimanual import CommandRefused
from lerobot_ros.hardware.lekiwi import RobotJoin
from lerobot_ros.mobile.omni import BaseVelocity

ARM = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]


def test_lekiwi_state_is_the_arm_then_the_base_and_commands_split_back():
    join = RobotJoin(stale_s=0.5)
    join.on_arm(ARM[::-1], np.arange(6.0)[::-1], now=1.0)  # by name, whatever the message's order
    assert join.state() is None  # the base has not reported
    join.on_base(BaseVelocity.from_twist(0.2, -0.1, 0.5), now=1.0)
    assert join.state().tolist() == pytest.approx([0, 1, 2, 3, 4, 5, 0.2, -0.1, 0.5])
    arm, base = join.split([0.1, 0, 0, 0, 0, 0.2, 0.3, 0.0, 1.0], now=1.1)
    assert arm.tolist() == [0.1, 0, 0, 0, 0, 0.2] and (base.x, base.y) == (0.3, 0.0)
    assert base.wz_radps == pytest.approx(1.0)


def test_lekiwi_refuses_when_a_part_is_silent_or_a_value_is_not_a_number():
    join = RobotJoin(stale_s=0.5)
    join.on_arm(ARM, np.zeros(6), now=1.0)
    join.on_base(BaseVelocity(), now=1.0)
    bad = np.zeros(9)
    bad[7] = np.inf
    with pytest.raises(CommandRefused, match=r"^value 7 \(y.vel\) is inf: not a number; command refused$"):
        join.split(bad, now=1.1)
    join.on_arm(ARM, np.zeros(6), now=2.0)
    with pytest.raises(CommandRefused, match=r"^no state from the base for 0.5 s: the robot holds$"):
        join.split(np.zeros(9), now=2.1)
    assert join.refused == 2


def test_lekiwi_operator_halves_join_into_one_action():
    join = RobotJoin(stale_s=0.5)
    assert join.on_operator("arm", np.ones(6), now=1.0) is None
    assert join.on_operator("base", [0.1, 0.0, 0.3], now=1.2).tolist() == [1.0] * 6 + [0.1, 0.0, 0.3]
