"""The pair logic of bimanual_node (hardware.bimanual.ArmPair) without ROS: names, order, splitting, joining the
leaders' halves, and the stop of the whole pair when one arm goes silent or a value is not a number."""

from __future__ import annotations

import numpy as np
import pytest

from lerobot_ros.hardware.bimanual import ArmPair, CommandRefused

ARM = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]


def alive_pair(now: float = 10.0) -> ArmPair:
    pair = ArmPair(stale_s=0.5)
    pair.on_state("right", ARM, np.arange(6) + 10.0, stamp_ns=200, now=now)
    pair.on_state("left", ARM, np.arange(6) * 1.0, stamp_ns=100, now=now)
    return pair


def test_the_pair_state_is_left_then_right_with_lerobots_prefixes():
    pair = ArmPair()
    pair.on_state("left", ARM, np.zeros(6), 100, now=0.0)
    assert pair.pair_state() is None  # one arm is not the pair yet
    names, positions, stamp = alive_pair().pair_state()
    assert names == [f"left_{j}" for j in ARM] + [f"right_{j}" for j in ARM]
    assert positions.tolist() == [0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15] and stamp == 200


def test_a_pair_command_splits_in_order():
    left, right = alive_pair().split(np.arange(12.0), now=10.1)
    assert left.tolist() == [0, 1, 2, 3, 4, 5] and right.tolist() == [6, 7, 8, 9, 10, 11]


def test_one_silent_arm_stops_the_pair():
    pair = alive_pair(now=10.0)
    pair.on_state("left", ARM, np.zeros(6), 300, now=10.6)
    with pytest.raises(CommandRefused, match=r"^no joint_states from the right arm for 0.5 s: both arms hold$"):
        pair.split(np.zeros(12), now=10.7)
    assert pair.stale_arms(10.7) == ["right"] and pair.refused == 1
    assert ArmPair().stale_arms(0.0) == ["left", "right"]  # none reported yet


def test_bad_commands_are_refused_whole():
    pair = alive_pair()
    values = np.zeros(12)
    values[8] = np.nan
    with pytest.raises(CommandRefused, match=r"^value 8 is nan: not a number; command refused$"):
        pair.split(values, now=10.1)
    with pytest.raises(CommandRefused, match=r"^a pair command has 12 values \(left 6, then right 6\); got 6$"):
        pair.split(np.zeros(6), now=10.1)
    assert pair.refused == 2 and "12 values" in pair.last_refusal


def test_the_leaders_halves_join_once_both_are_fresh():
    pair = ArmPair(stale_s=0.5)
    assert pair.on_teleop("left", np.ones(6), now=1.0) is None  # the right leader has not spoken
    joined = pair.on_teleop("right", np.full(6, 2.0), now=1.1)
    assert joined.tolist() == [1.0] * 6 + [2.0] * 6
    assert pair.on_teleop("left", np.zeros(6), now=2.0) is None  # the right half is stale by now
