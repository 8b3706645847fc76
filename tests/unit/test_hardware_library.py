"""Hardware library without ROS: unit conversion, command buffering/watchdog, backoff, diagnostics levels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus

from lerobot_ros.hardware.commands import IDLE, TIMEOUT, TRACKING, TRAJECTORY, CommandBuffer
from lerobot_ros.hardware.health import Backoff, Health
from lerobot_ros.hardware.units import DEGREES, RANGE_0_100, RANGE_M100_100, JointSpec, JointUnits
from lerobot_ros.ros.diagnostics import health_status

S = 1_000_000_000


def units():
    return JointUnits(
        [
            JointSpec("a", DEGREES, 1000, 3000, 4095),
            JointSpec("b", RANGE_M100_100, 1000, 3000, 4095),
            JointSpec("g", RANGE_0_100, 2000, 3000, 4095),
        ]
    )


def test_all_modes_map_mid_range_to_zero_and_agree_on_angles():
    u = units()
    assert np.allclose(u.to_radians({"a": 0.0, "b": 0.0, "g": 50.0}), 0.0)
    # LeRobot's degree mode: 90 degrees = pi/2.
    assert u.to_radians({"a": 90.0, "b": 0.0, "g": 50.0})[0] == pytest.approx(math.pi / 2)
    # -100..100: +100 is the top of the range, i.e. half the range (1000 ticks) from mid.
    assert u.to_radians({"a": 0.0, "b": 100.0, "g": 50.0})[1] == pytest.approx(1000 * 2 * math.pi / 4095)
    # 0..100: 100 is the top of a 1000-tick range, 500 ticks from mid.
    assert u.to_radians({"a": 0.0, "b": 0.0, "g": 100.0})[2] == pytest.approx(500 * 2 * math.pi / 4095)


def test_round_trip_and_clipping_to_the_calibrated_range():
    u = units()
    values = {"a.pos": 12.5, "b.pos": -40.0, "g.pos": 70.0}
    back = u.from_radians(u.to_radians(values, suffix=".pos"), suffix=".pos")
    assert back == pytest.approx(values)
    out = u.from_radians([10.0, -10.0, 10.0])
    assert out["a"] == pytest.approx(1000 * 360 / 4095)  # the range's end, in degrees
    assert out["b"] == pytest.approx(-100.0) and out["g"] == pytest.approx(100.0)
    with pytest.raises(ValueError, match="NaN"):
        u.clip([0.0, float("nan"), 0.0])
    with pytest.raises(ValueError, match=r"expected 3 joint values \(a, b, g\)"):
        u.clip([0.0, 0.0])
    with pytest.raises(ValueError, match="range_min 5 >= range_max 5"):
        JointUnits([JointSpec("x", DEGREES, 5, 5, 4095)])


def test_a_reading_far_outside_the_calibrated_range_is_implausible():
    """A joint may sit a little past its calibrated range; a garbled reply (seen: -39 rad) is refused, by name."""
    u = units()
    half_a = 1000 * 2 * math.pi / 4095  # joint a: +-1.53 rad
    assert u.implausible(np.array([half_a + 0.3, 0.0, 0.0])) is None  # a little past: fine
    why = u.implausible(np.array([-39.33, 0.0, 0.0]))
    assert why == (
        "implausible reading: a at -39.3 rad, outside its calibrated range -1.53..1.53 rad (a garbled bus reply?); "
        "the sample was dropped"
    )
    assert "g at nan rad" in u.implausible(np.array([0.0, 0.0, math.nan]))


def test_command_buffer_watchdog_holds_after_silence():
    buf = CommandBuffer(2, watchdog_s=0.5)
    assert buf.state(0) == IDLE and buf.goal(0) is None
    buf.set_positions([0.1, 0.2], now_ns=1 * S)
    assert buf.state(1 * S + S // 4) == TRACKING
    assert buf.goal(1 * S + S // 4).tolist() == [0.1, 0.2]
    assert buf.state(2 * S) == TIMEOUT and buf.goal(2 * S) is None
    with pytest.raises(ValueError, match="3 values for 2 joints"):
        buf.set_positions([1, 2, 3], now_ns=0)


def test_trajectory_interpolates_from_current_and_watchdog_counts_from_its_end():
    buf = CommandBuffer(1, watchdog_s=0.5)
    buf.set_trajectory([1 * S, 2 * S], [[1.0], [3.0]], start_ns=10 * S, now_ns=10 * S, current=[0.0])
    assert buf.state(10 * S) == TRAJECTORY
    assert buf.goal(10 * S + S // 2)[0] == pytest.approx(0.5)  # halfway from current to the first point
    assert buf.goal(11 * S + S // 2)[0] == pytest.approx(2.0)
    assert buf.goal(12 * S + S // 4)[0] == pytest.approx(3.0)  # holds the last point
    assert buf.state(12 * S + S // 4) == TRAJECTORY
    assert buf.state(13 * S) == TIMEOUT


def test_partial_commands_keep_other_joints():
    buf = CommandBuffer(3, watchdog_s=1.0)
    buf.set_partial([1], [0.7], now_ns=0, fallback=[0.1, 0.2, 0.3])
    assert buf.goal(0).tolist() == [0.1, 0.7, 0.3]
    buf.set_partial([0], [-0.5], now_ns=1, fallback=[9, 9, 9])
    assert buf.goal(1).tolist() == [-0.5, 0.7, 0.3]


def test_a_partial_command_after_the_watchdog_builds_on_the_present_position():
    """The watchdog held the arm at its present position: a gripper-only command must not send the other joints
    back to the goal they had before the silence."""
    buf = CommandBuffer(3, watchdog_s=0.5)
    buf.set_positions([1.0, 1.0, 1.0], now_ns=0)
    buf.set_partial([2], [0.4], now_ns=2_000_000_000, fallback=[0.1, 0.2, 0.3])  # 2 s later: timed out
    assert buf.goal(2_000_000_000).tolist() == [0.1, 0.2, 0.4]


def test_a_calibration_file_that_cannot_be_read_is_one_line(tmp_path):
    """LeRobot's constructor raised draccus' own error (a traceback at start-up) for a broken calibration JSON."""
    from lerobot_ros.hardware.devices import DeviceConfigError, make_follower

    broken = tmp_path / "follower.json"
    broken.write_text('{"shoulder_pan": {"id": 1, "drive_mode": 0, ')  # cut off mid-file
    with pytest.raises(
        DeviceConfigError, match=rf"^calibration file {broken} cannot be read \(.*\); fix it, or calibrate again"
    ):
        make_follower("so101_follower", "/dev/ttyACM9", calibration_file=str(broken))


def test_backoff_grows_and_resets():
    b = Backoff(initial_s=0.5, factor=2.0, max_s=2.0)
    assert [b.failed(now=0.0) for _ in range(4)] == [0.5, 1.0, 2.0, 2.0]
    assert not b.due(now=1.0) and b.due(now=2.0)
    b.succeeded()
    assert b.failed(now=0.0) == 0.5


def test_health_levels_in_diagnostics():
    h = Health(window_s=1.0)
    status = health_status("arm", "/dev/x", h)
    assert status.level == DiagnosticStatus.ERROR and status.message == "disconnected: not connected yet"
    h.connected = True
    for t in range(10):
        h.tick(now=100.0 + t * 0.1)
    assert h.rate_hz(now=100.95) == pytest.approx(10.0)
    assert health_status("arm", "/dev/x", h).level == DiagnosticStatus.OK
    h.error(ConnectionError("There is no status packet!"))
    status = health_status("arm", "/dev/x", h, {"torque_enabled": "true"})
    assert status.level == DiagnosticStatus.WARN and "no status packet" in status.message
    values = {kv.key: kv.value for kv in status.values}
    assert (
        values["errors"] == "1"
        and values["last_error"].startswith("ConnectionError")
        and values["torque_enabled"] == "true"
    )
    assert values["loops"] == "10"  # cumulative, unlike the windowed rate
    h.ok()
    assert health_status("arm", "/dev/x", h).level == DiagnosticStatus.OK


def test_watchdog_hold_is_a_warning_with_the_reason():
    from diagnostic_msgs.msg import DiagnosticStatus

    from lerobot_ros.hardware.commands import IDLE, TIMEOUT, TRACKING
    from lerobot_ros.ros.diagnostics import watchdog_warning

    for state in (IDLE, TRACKING):
        assert (
            watchdog_warning(DiagnosticStatus(level=DiagnosticStatus.OK, message="ok"), state, 0.5).level
            == DiagnosticStatus.OK
        )
    held = watchdog_warning(DiagnosticStatus(level=DiagnosticStatus.OK, message="ok"), TIMEOUT, 0.5)
    assert held.level == DiagnosticStatus.WARN and "no command for over 0.5 s" in held.message
    worse = watchdog_warning(DiagnosticStatus(level=DiagnosticStatus.ERROR, message="disconnected"), TIMEOUT, 0.5)
    assert worse.level == DiagnosticStatus.ERROR and worse.message == "disconnected"  # a worse state is kept
