"""ArmDriver without ROS: LeRobot's max_relative_target, calibration written to fresh motors, reconnect."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from lerobot_ros.hardware.devices import DeviceConfigError, make_follower, make_leader
from lerobot_ros.hardware.driver import ArmDriver
from lerobot_ros.hardware.health import Backoff
from lerobot_ros.hardware.virtual.arms import VirtualArm
from lerobot_ros.ros.runtime import wait_until

pytestmark = pytest.mark.slow  # imports LeRobot's robot classes (torch)


def retried(fn, attempts: int = 3):
    """One SDK transaction can time out on a starved machine (the driver counts it and goes on); retry."""
    for _ in range(attempts):
        result = fn()
        if result is not None and result is not False:
            return result
    return result


@pytest.fixture
def arm(tmp_path):
    a = VirtualArm("so101", "follower", port=tmp_path / "port")
    a.cal = str(a.write_calibration(tmp_path / "cal.json"))
    with a:
        yield a


def test_max_relative_target_caps_each_step(arm):
    driver = ArmDriver(
        lambda: make_follower("so101_follower", arm.port, calibration_file=arm.cal, max_relative_target=5.0)
    )
    assert retried(driver.connect)
    try:
        sent = retried(lambda: driver.write(np.array([1.0, 0, 0, 0, 0, 0])))  # 57 degrees away: LeRobot sends 5 degrees
        assert sent[0] == pytest.approx(math.radians(5.0), abs=1e-3)
    finally:
        driver.close()


def test_exchange_reads_then_sends_the_goal_and_sends_nothing_after_a_failed_read(arm):
    driver = ArmDriver(
        lambda: make_follower("so101_follower", arm.port, calibration_file=arm.cal), max_consecutive_errors=10
    )
    assert retried(driver.connect)
    try:
        elbow = arm.servo("elbow_flex")
        before = elbow.register("Goal_Position")
        goal = np.zeros(6)
        goal[2] = 0.3  # elbow_flex: 0.3 rad from the middle of its range
        positions = retried(lambda: driver.exchange(goal))
        assert positions.shape == (6,) and driver.last_positions is positions
        # a write has no reply: the emulator applies it a moment after exchange() returns
        wait_until(lambda: elbow.register("Goal_Position") != before, 5, what="the goal reaching the servo")
        sent = elbow.register("Goal_Position")
        loops = driver.health.loops
        arm.bus.faults.no_reply.add(arm.servo("shoulder_pan").id)  # the read fails: the goal must not go out
        goal[2] = -0.3
        assert driver.exchange(goal) is None
        assert driver.health.consecutive_errors == 1 and driver.health.loops == loops
        arm.bus.faults.clear()
        # a read-only round trip after the failed exchange: the emulator serves the pty's bytes in order, so once
        # its reply is back, a goal the failed exchange had sent would have been applied already
        assert retried(driver.read) is not None
        assert elbow.register("Goal_Position") == sent
        assert retried(lambda: driver.exchange(goal)) is not None
        wait_until(lambda: elbow.register("Goal_Position") != sent, 5, what="the next good read sending the goal")
        assert driver.exchange(None) is not None and driver.health.consecutive_errors == 0
    finally:
        driver.close()


def test_calibration_file_is_written_to_uncalibrated_motors(arm):
    for servo in arm.bus.servos.values():  # factory-fresh motors
        servo.set_register("Homing_Offset", 0)
        servo.set_register("Min_Position_Limit", 0)
        servo.set_register("Max_Position_Limit", 4095)
    driver = ArmDriver(lambda: make_follower("so101_follower", arm.port, calibration_file=arm.cal))
    assert retried(driver.connect)
    try:
        elbow = arm.calibration["elbow_flex"]
        servo = arm.servo("elbow_flex")
        assert servo.register("Min_Position_Limit") == elbow["range_min"]
        assert servo.register("Homing_Offset") == elbow["homing_offset"]
        assert driver.device.is_calibrated
    finally:
        driver.close()


def test_reconnects_with_backoff_after_unplug(arm):
    driver = ArmDriver(
        lambda: make_follower("so101_follower", arm.port, calibration_file=arm.cal),
        backoff=Backoff(initial_s=0.05, max_s=0.2),
    )
    assert retried(driver.connect) and retried(driver.read) is not None
    arm.bus.unplug()
    for _ in range(3):
        assert driver.read() is None
    assert not driver.connected and driver.health.errors >= 3
    assert "Port is in use" not in driver.health.last_error  # the SDK's busy flag is cleared after a failure
    assert not driver.maybe_reconnect()  # nothing at the port: stays disconnected, next try after a backoff
    arm.bus.plug()
    deadline = time.monotonic() + 10
    while not driver.maybe_reconnect():
        assert time.monotonic() < deadline, driver.health.last_error
        time.sleep(0.05)
    assert retried(driver.read) is not None and driver.health.reconnects == 1
    driver.close()


def test_a_reconnect_keeps_the_torque_the_user_switched_off(arm):
    """set_torque(false), then a USB hiccup: LeRobot's connect() ends with torque on again (its configure), which
    drove a hand-moved arm back to its old goal; the driver switches it off again at once."""
    driver = ArmDriver(
        lambda: make_follower("so101_follower", arm.port, calibration_file=arm.cal),
        backoff=Backoff(initial_s=0.05, max_s=0.2),
    )
    assert retried(driver.connect)
    driver.set_torque(False)
    arm.bus.unplug()
    while driver.connected:
        driver.read()
    arm.bus.plug()
    deadline = time.monotonic() + 10
    while not driver.maybe_reconnect():
        assert time.monotonic() < deadline, driver.health.last_error
        time.sleep(0.05)
    assert not driver.torque_enabled and all(s.register("Torque_Enable") == 0 for s in arm.bus.servos.values())
    driver.set_torque(True)
    assert all(s.register("Torque_Enable") == 1 for s in arm.bus.servos.values())
    driver.close()


def test_a_write_that_fails_every_tick_reconnects_like_a_failing_read(arm):
    """Reads fine, writes failing (LeRobot's max_relative_target pre-read timing out on a flaky bus): the read's
    success reset the error count each tick, so the arm never moved and the driver never reconnected. The failing
    write is injected into LeRobot's send_action (the emulator has no write-only fault)."""
    driver = ArmDriver(
        lambda: make_follower("so101_follower", arm.port, calibration_file=arm.cal),
        backoff=Backoff(initial_s=60),
        max_consecutive_errors=3,
    )
    assert retried(driver.connect)

    def fails(action):
        raise ConnectionError("Failed to sync read 'Present_Position' (injected)")

    driver.device.send_action = fails
    for _ in range(3):
        driver.exchange(np.zeros(6))
    assert not driver.connected and "injected" in driver.health.last_error
    driver.close()


def test_device_errors_say_what_to_do(tmp_path):
    with pytest.raises(
        DeviceConfigError, match=r"no calibration file at .*absent\.json: calibrate the arm with `lerobot-calibrate"
    ):
        make_follower("so101_follower", "/dev/ttyACM0", calibration_file=str(tmp_path / "absent.json"))
    with pytest.raises(DeviceConfigError, match="parameter 'port' is empty"):
        make_follower("koch_follower", "")
    with pytest.raises(DeviceConfigError, match="keyboard/gamepad teleoperators emit key or stick events"):
        make_leader("keyboard", "/dev/null")


def test_torque_goes_off_on_close_even_after_the_port_was_dropped(arm):
    driver = ArmDriver(
        lambda: make_follower("so101_follower", arm.port, calibration_file=arm.cal), backoff=Backoff(initial_s=60)
    )
    assert retried(driver.connect)
    assert all(s.register("Torque_Enable") == 1 for s in arm.bus.servos.values())
    arm.bus.faults.no_reply.add(1)
    while driver.connected:
        driver.read()
    arm.bus.faults.clear()
    driver.close()  # disconnected, next reconnect a minute away: close still switches torque off
    assert all(s.register("Torque_Enable") == 0 for s in arm.bus.servos.values())


def test_a_reading_far_outside_the_calibrated_range_is_dropped_not_published(tmp_path):
    """A leader reporting shoulder_pan 1500 ticks past the middle of a range of +-1000 (what a garbled reply that
    passed its checksum looks like; seen as -39 rad on an emulated bus under load): the read counts as failed,
    nothing is returned to publish, and the next plausible reading goes through."""
    leader = VirtualArm("so101", "leader", port=tmp_path / "port")
    cal = str(leader.write_calibration(tmp_path / "cal.json"))
    with leader:
        driver = ArmDriver(lambda: make_leader("so101_leader", leader.port, calibration_file=cal))
        assert retried(driver.connect)
        try:
            assert retried(driver.read) is not None
            pan = leader.servo("shoulder_pan")
            mid = pan.present_position()
            pan.move_by_hand(mid + 1500)
            assert driver.read() is None
            assert driver.health.last_error.startswith("ValueError: implausible reading: shoulder_pan at 2.3 rad")
            pan.move_by_hand(mid + 300)
            back = retried(driver.read)
            assert back is not None and back[0] == pytest.approx(300 * 2 * math.pi / 4096, abs=0.01)
        finally:
            driver.close()
