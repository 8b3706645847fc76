"""lerobot_ros.hardware.follower without ROS: a FollowerArm on an emulated Feetech bus (MotorBusDevice over a
pty, the real SDK): command checks and their rejection texts, partial and trajectory goals, torque, live
changes, the control thread's state and diagnostics callbacks, torque off on close."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from lerobot_ros.hardware.bus_device import MotorBusDevice
from lerobot_ros.hardware.commands import IDLE, TRACKING, TRAJECTORY
from lerobot_ros.hardware.devices import DeviceConfigError
from lerobot_ros.hardware.follower import FollowerArm
from lerobot_ros.hardware.virtual import VirtualBus, VirtualServo
from lerobot_ros.ros.runtime import wait_until

NAMES = ["pan", "tilt"]
TICKS_PER_RAD = 4095 / (2 * math.pi)
pytestmark = pytest.mark.usefixtures("quick_gil_handoff")


class Calls:
    """What the node would do with the arm's callbacks: publish states and diagnostics, log rejections."""

    def __init__(self):
        self.states, self.rejected, self.errors = [], [], []
        self.diagnostics = threading.Event()
        self.now = 1_000_000_000

    def arm(self, port: str, **settings) -> FollowerArm:
        options = dict(fps=50.0, watchdog_s=5.0, diagnostics_period_s=0.2)
        options.update(settings)
        factory = lambda: MotorBusDevice("feetech", port, NAMES, [1, 2], ["sts3215", "sts3215"])  # noqa: E731
        return FollowerArm(
            factory,
            now_ns=lambda: self.now,
            on_state=lambda p, t: self.states.append((p.copy(), t)),
            on_diagnostics=self.diagnostics.set,
            on_rejected=self.rejected.append,
            on_error=self.errors.append,
            **options,
        )


@pytest.fixture
def bus(tmp_path):
    servos = [VirtualServo(1, "sts3215"), VirtualServo(2, "sts3215")]
    for servo in servos:
        servo.move_by_hand(2047)
    bus = VirtualBus(servos, port=tmp_path / "bus").start()
    yield bus, servos
    bus.close()


@pytest.fixture
def calls():
    return Calls()


def test_bad_configuration_fails_before_any_thread_starts(calls):
    with pytest.raises(DeviceConfigError, match="port"):
        calls.arm("")


def test_commands_are_checked_before_they_reach_the_buffer(bus, calls):
    arm = calls.arm(bus[0].port)  # not started: the buffer alone decides
    assert arm.names == NAMES and arm.buffer.state(calls.now) == IDLE
    arm.command([0.1])
    arm.command([0.1, float("nan")])
    assert calls.rejected == [
        "commands: got 1 values; expected 2 values in order ['pan', 'tilt']",
        "commands: command contains NaN or infinite values; expected 2 values in order ['pan', 'tilt']",
    ]
    assert arm.buffer.count == 0 and arm.driver.health.values["last_rejected_command"] == calls.rejected[-1]
    arm.command([0.1, -0.2])
    assert arm.buffer.state(calls.now) == TRACKING
    np.testing.assert_allclose(arm.buffer.goal(calls.now), [0.1, -0.2])
    arm.joint_command(["tilt", "pan"], [0.3, 0.2])  # by name, any order
    np.testing.assert_allclose(arm.buffer.goal(calls.now), [0.2, 0.3])
    arm.joint_command(["elbow"], [0.3])
    assert calls.rejected[-1].startswith("joint_command: needs positions for known joints ['pan', 'tilt']")
    arm.close()


def test_partial_command_needs_a_read_first_and_empty_trajectory_clears(bus, calls):
    arm = calls.arm(bus[0].port)
    arm.joint_command(["pan"], [0.2])
    assert calls.rejected == ["joint_command: partial command before the first joint state was read"]
    arm.trajectory([0, 500_000_000], [[0.0, 0.0], [0.4, 0.2]], stamp_ns=calls.now)
    assert arm.buffer.state(calls.now) == TRAJECTORY
    np.testing.assert_allclose(arm.buffer.goal(calls.now + 250_000_000), [0.2, 0.1])  # linear in between
    arm.trajectory([], np.zeros((0, 2)))
    assert arm.buffer.state(calls.now) == IDLE
    arm.close()


def test_the_loop_reads_publishes_moves_and_reports(bus, calls):
    virtual, servos = bus
    port = virtual.port
    arm = calls.arm(port)
    assert arm.start()
    wait_until(lambda: len(calls.states) >= 3, 15, what="joint states from the loop")
    positions, stamp = calls.states[-1]
    assert stamp == calls.now and positions == pytest.approx([0.0, 0.0], abs=0.01)
    assert calls.diagnostics.wait(5)
    values = arm.diagnostic_values()
    assert values == {"torque_enabled": "true", "command_state": "idle", "commands_received": "0"}
    arm.joint_command(["tilt"], [-0.25])  # partial, after a read: pan holds where it is
    np.testing.assert_allclose(arm.buffer.goal(calls.now), [positions[0], -0.25])
    arm.command([0.5, -0.25])
    wait_until(lambda: abs(servos[0].present_position() - (2047.5 + 0.5 * TICKS_PER_RAD)) <= 2, 15, what="pan goal")
    assert arm.diagnostic_values()["command_state"] == "tracking" and not calls.errors
    arm.close()
    arm.close()  # idempotent
    assert not arm.loop.running and servos[0].register("Torque_Enable") == 0  # torque off on close


def test_torque_and_live_settings(bus, calls):
    virtual, servos = bus
    port = virtual.port
    arm = calls.arm(port, torque_off_on_close=False)
    assert arm.start()
    wait_until(lambda: calls.states, 15, what="a first read")
    arm.command([0.1, 0.1])
    assert arm.set_torque(False) == (True, "torque disabled")
    assert arm.buffer.state(calls.now) == IDLE and servos[0].register("Torque_Enable") == 0  # goals dropped
    assert arm.set_torque(True) == (True, "torque enabled")
    arm.apply(
        {
            "fps": 20.0,
            "watchdog_s": 0.4,
            "diagnostics_period_s": 2.0,
            "torque_off_on_shutdown": True,
            "robot.max_relative_target": 3.0,
        }
    )  # a MotorBusDevice has no LeRobot config: nothing to cap there
    assert arm.loop.period_s == pytest.approx(0.05) and arm.buffer.watchdog_ns == 400_000_000
    assert arm.diagnostics_period_s == 2.0 and arm.driver.torque_off_on_close
    with pytest.raises(ValueError, match=r"not changeable while running: \['robot.port'\]"):
        arm.apply({"robot.port": "/dev/ttyUSB0"})
    arm.close()
    assert servos[0].register("Torque_Enable") == 0  # the live change to torque-off-on-close took effect
