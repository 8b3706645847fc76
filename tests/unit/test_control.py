"""The follower control step and the steady loop, without ROS or a bus.

FollowerControl is driven through a recording stand-in for ArmDriver (its three members the step uses):
the real driver on emulated servos is what tests/integration/test_robot_node.py runs; here the decisions are checked
tick by tick, which a bus cannot make deterministic."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from lerobot_ros.hardware.commands import CommandBuffer
from lerobot_ros.hardware.control_loop import FollowerControl, SteadyLoop
from lerobot_ros.ros.runtime import wait_until

MS = 1_000_000


class RecordingDriver:
    """Stand-in for ArmDriver: reports `present`, records the goals exchanged and the positions written."""

    def __init__(self, present, torque=True):
        self.present = np.asarray(present, dtype=float)
        self.torque_enabled = torque
        self.exchanged: list = []
        self.written: list = []
        self.readable = True

    def exchange(self, goal):
        if not self.readable:
            return None
        self.exchanged.append(None if goal is None else np.asarray(goal).copy())
        return self.present.copy()

    def write(self, positions, report_sent=True):
        self.written.append(np.asarray(positions).copy())


class Log:
    def __init__(self):
        self.warnings: list[str] = []

    def warning(self, text):
        self.warnings.append(text)


def make(torque=True):
    driver, buffer, log = RecordingDriver([0.1, 0.2], torque), CommandBuffer(2, watchdog_s=0.1), Log()
    return FollowerControl(driver, buffer, log), driver, buffer, log


def test_no_command_sends_nothing_and_a_command_is_sent_after_the_read():
    control, driver, buffer, _ = make()
    np.testing.assert_array_equal(control.step(0), [0.1, 0.2])
    assert driver.exchanged == [None] and not driver.written
    buffer.set_positions([0.5, -0.5], now_ns=10 * MS)
    control.step(20 * MS)
    np.testing.assert_array_equal(driver.exchanged[-1], [0.5, -0.5])


def test_watchdog_expiry_holds_the_present_position_once():
    control, driver, buffer, log = make()
    buffer.set_positions([0.5, -0.5], now_ns=0)
    control.step(50 * MS)
    assert not control.holding
    control.step(200 * MS)  # 200 ms since the command, watchdog 100 ms
    assert driver.exchanged[-1] is None and control.holding
    np.testing.assert_array_equal(driver.written[-1], [0.1, 0.2])  # the position just read
    assert log.warnings == ["command watchdog expired: holding the present position"]
    control.step(300 * MS)
    assert len(driver.written) == 1 and len(log.warnings) == 1  # held once, not every tick
    buffer.set_positions([0.3, 0.3], now_ns=310 * MS)  # a new command ends the hold
    control.step(320 * MS)
    assert not control.holding
    np.testing.assert_array_equal(driver.exchanged[-1], [0.3, 0.3])
    control.step(500 * MS)  # and a second expiry holds again
    assert control.holding and len(driver.written) == 2


def test_torque_off_sends_no_goal_and_no_hold():
    control, driver, buffer, log = make(torque=False)
    buffer.set_positions([0.5, -0.5], now_ns=0)
    control.step(10 * MS)
    control.step(500 * MS)
    assert driver.exchanged == [None, None] and not driver.written and not log.warnings


def test_nothing_read_means_nothing_decided():
    control, driver, buffer, _ = make()
    buffer.set_positions([0.5, -0.5], now_ns=0)
    driver.readable = False
    assert control.step(500 * MS) is None
    assert not control.holding and not driver.written


def test_watchdog_change_takes_effect_on_the_next_tick():
    control, driver, buffer, _ = make()
    buffer.set_positions([0.5, -0.5], now_ns=0)
    buffer.watchdog_ns = 1000 * MS  # what robot_node's watchdog_s parameter sets live
    control.step(200 * MS)
    assert not control.holding
    np.testing.assert_array_equal(driver.exchanged[-1], [0.5, -0.5])


def test_steady_loop_runs_survives_errors_changes_period_and_stops():
    calls, errors = [], []
    second = threading.Event()

    def step():
        calls.append(1)
        if len(calls) == 2:
            second.set()
            raise RuntimeError("bus hiccup")

    loop = SteadyLoop(step, 0.005, on_error=errors.append).start()
    try:
        wait_until(lambda: len(calls) >= 5, 10, what="loop iterations")
        assert [str(e) for e in errors] == ["bus hiccup"] and loop.running
        loop.period_s = 0.001
        done = len(calls)
        wait_until(lambda: len(calls) >= done + 5, 10, what="iterations at the new period")
    finally:
        loop.stop()
    assert not loop.running  # stop() joined the thread
    with pytest.raises(ValueError, match="period must be positive"):
        SteadyLoop(step, 0.0)
