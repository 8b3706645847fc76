"""A mobile base's operator inputs without ROS (teleop.base_inputs): teleop_twist_keyboard's keys with holds and
speed changes, and a gamepad's axes with its deadman button."""

from __future__ import annotations

import math

import pytest

from lerobot_ros.teleop.base_inputs import STILL, JoyTwist, KeyTwist


def test_keys_drive_turn_strafe_and_stop():
    keys = KeyTwist(speed=0.2, turn=1.0, hold_s=0.6)
    assert keys.twist(0.0) == STILL  # nothing pressed
    assert keys.press(b"i", 1.0) and keys.twist(1.1) == (0.2, 0.0, 0.0)
    assert keys.twist(1.7) == STILL  # no auto-repeat for hold_s: the base stops
    keys.press(b"j", 2.0)
    assert keys.twist(2.1) == (0.0, 0.0, 1.0)  # turn left (counter-clockwise)
    keys.press(b"J", 3.0)
    assert keys.twist(3.1) == (0.0, 0.2, 0.0)  # Shift: strafe left
    keys.press(b"o", 4.0)
    assert keys.twist(4.1) == (0.2, 0.0, -1.0)
    keys.press(b"k", 4.2)
    assert keys.twist(4.3) == STILL
    assert not keys.press(b"?", 5.0)  # a key that means nothing


def test_speed_keys_scale_by_ten_percent():
    keys = KeyTwist(speed=0.2, turn=1.0)
    keys.press(b"q", 0.0)  # both
    keys.press(b"x", 0.0)  # linear down
    keys.press(b"e", 0.0)  # turn up
    assert keys.speed == pytest.approx(0.2 * 1.1 * 0.9) and keys.turn == pytest.approx(1.0 * 1.1 * 1.1)
    keys.press(b",", 1.0)
    assert keys.twist(1.0) == pytest.approx((-0.198, 0.0, 0.0))


def test_gamepad_axes_need_the_deadman_button():
    pad = JoyTwist(axis_x=1, axis_y=0, axis_yaw=3, deadman=4, speed=0.2, turn=1.0)
    axes = [0.5, 1.0, 0.0, -0.5]
    assert pad.twist(axes, [0, 0, 0, 0, 0]) == STILL  # not held
    assert pad.twist(axes, [0, 0, 0, 0, 1]) == pytest.approx((0.2, 0.1, -0.5))
    assert pad.twist([0.05, math.nan, 0.0, 2.0], [0, 0, 0, 0, 1]) == pytest.approx(
        (0.0, 0.0, 1.0)
    )  # deadzone, NaN, clip
    assert JoyTwist(deadman=-1).twist([0.0, 1.0], []) == pytest.approx((0.2, 0.0, 0.0))  # no deadman; missing axes 0
