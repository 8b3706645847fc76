"""LeKiwi's omniwheel base without ROS: the kinematics against LeRobot's own functions, the command gate, the
speed and acceleration limits, odometry, the emulated wheel servos in velocity mode, and the control loop
driving them through LeRobot's Feetech bus over a pty."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from lerobot.robots.lekiwi.lekiwi import LeKiwi

from lerobot_ros.hardware.virtual.base import VirtualOmniBase
from lerobot_ros.hardware.virtual.servo import FEETECH_VELOCITY_MODE, VirtualServo
from lerobot_ros.hardware.wheel_base import BaseLoop, WheelBus
from lerobot_ros.mobile.base_control import BaseLimits, CommandGate, Odometry2D, VelocityShaper
from lerobot_ros.mobile.omni import WHEEL_NAMES, BaseVelocity, OmniGeometry
from lerobot_ros.ros.runtime import wait_until

pytestmark = pytest.mark.usefixtures("quick_gil_handoff")


def lerobot_wheel_raw(x, y, theta):
    # the two conversions only use LeKiwi's static helpers: called unbound, no robot (no bus) is needed
    out = LeKiwi._body_to_wheel_raw(LeKiwi, x, y, theta)  # type: ignore[arg-type]
    return [out[n] for n in WHEEL_NAMES]


def test_wheel_commands_equal_lerobots_for_every_body_velocity():
    rng = np.random.default_rng(0)
    g = OmniGeometry()
    samples = [(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-400, 400)) for _ in range(500)]
    samples += [(0.0, 0.0, 0.0), (0.4, 0.0, 0.0), (0.0, 0.4, 0.0), (0.0, 0.0, 90.0), (5.0, -5.0, 720.0)]
    for x, y, theta in samples:
        assert g.wheel_raw(BaseVelocity(x, y, theta)).tolist() == lerobot_wheel_raw(x, y, theta), (x, y, theta)


def test_body_velocity_from_wheel_speeds_equals_lerobots():
    rng = np.random.default_rng(1)
    g = OmniGeometry()
    for raw in rng.integers(-3000, 3001, size=(300, 3)):
        ref = LeKiwi._wheel_raw_to_body(LeKiwi, *raw)  # type: ignore[arg-type]
        ours = g.body_velocity(raw).as_lerobot()
        assert ours == pytest.approx(ref, abs=1e-9)


def test_a_command_beyond_the_fastest_wheel_is_scaled_down_as_a_whole():
    g = OmniGeometry()
    fast = BaseVelocity(2.0, 1.0, 0.0)  # each wheel far beyond 3000 steps/s
    raw = g.wheel_raw(fast)
    assert np.max(np.abs(raw)) == g.max_raw
    back = g.body_velocity(raw)
    assert math.atan2(back.y, back.x) == pytest.approx(math.atan2(1.0, 2.0), abs=1e-3)  # the direction holds


def test_forward_left_and_counter_clockwise_follow_rep_103():
    g = OmniGeometry()
    left, back, right = g.wheel_degps(BaseVelocity(0.2, 0.0, 0.0))
    assert back == pytest.approx(0.0, abs=1e-9) and left == pytest.approx(-right)
    assert g.body_velocity(g.wheel_raw(BaseVelocity(0.0, 0.2, 0.0))).y == pytest.approx(0.2, abs=2e-3)
    spin = g.wheel_degps(BaseVelocity(0.0, 0.0, 90.0))
    assert spin == pytest.approx([spin[0]] * 3)  # a turn on the spot drives every wheel alike
    assert BaseVelocity.from_twist(0.0, 0.0, math.pi / 2).theta_degps == pytest.approx(90.0)


def test_the_gate_stops_the_base_when_commands_stop_or_are_not_numbers():
    gate = CommandGate(timeout_s=0.5)
    assert gate.target(0.0) == BaseVelocity() and gate.stale(0.0)  # nothing received yet: stand still
    assert gate.offer(BaseVelocity(0.2, 0.0, 10.0), now=10.0) is None
    assert gate.target(10.4) == BaseVelocity(0.2, 0.0, 10.0)
    assert gate.target(10.6) == BaseVelocity()  # stale after the timeout
    assert gate.offer(BaseVelocity(0.2, 0.0, 0.0), now=11.0) is None
    assert gate.offer(BaseVelocity(float("nan"), 0.0, math.inf), now=11.1) == "non-finite x.vel, theta.vel"
    assert gate.target(11.1) == BaseVelocity() and gate.rejected == 1  # refused: stopped at once, not at the timeout


def test_speed_limits_keep_the_direction_and_acceleration_limits_ramp():
    shaper = VelocityShaper(BaseLimits(max_linear_mps=0.4, max_angular_degps=90.0, max_linear_accel=1.0))
    assert shaper.clamp(BaseVelocity(0.6, 0.8, 200.0)) == BaseVelocity(pytest.approx(0.24), pytest.approx(0.32), 90.0)
    assert shaper.clamped == 1
    speeds = [math.hypot(v.x, v.y) for v in (shaper.step(BaseVelocity(0.4, 0.0, 0.0), 0.02) for _ in range(30))]
    assert speeds[0] == pytest.approx(0.02) and speeds[9] == pytest.approx(0.2) and speeds[-1] == pytest.approx(0.4)
    assert np.all(np.diff(speeds) <= 0.02 + 1e-12)  # 1 m/s^2 at 50 Hz: at most 0.02 m/s per tick
    assert shaper.step(BaseVelocity(), 0.02).x == pytest.approx(0.38)  # and the same way down


def test_odometry_of_a_constant_twist_is_the_exact_arc_and_a_square_closes():
    odom = Odometry2D()
    for _ in range(100):  # a quarter circle of radius 1 m: v = 0.5 m/s, w = 0.5 rad/s, pi s
        odom.update(BaseVelocity(0.5, 0.0, math.degrees(0.5)), math.pi / 100)
    assert (odom.x, odom.y, odom.yaw) == pytest.approx((1.0, 1.0, math.pi / 2), abs=1e-9)
    square = Odometry2D()
    for _ in range(4):
        for _ in range(50):
            square.update(BaseVelocity(0.2, 0.0, 0.0), 0.04)  # 0.4 m forward
        for _ in range(25):
            square.update(BaseVelocity(0.0, 0.0, 90.0), 0.04)  # 90 degrees on the spot
    assert (square.x, square.y, square.yaw) == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)
    assert square.distance == pytest.approx(1.6)


def test_an_emulated_wheel_in_velocity_mode_follows_its_goal_speed():
    servo = VirtualServo(7, "sts3215", tau_s=0.02)
    servo.set_register("Operating_Mode", FEETECH_VELOCITY_MODE)
    servo.set_register("Torque_Enable", 1)
    servo.set_register("Goal_Velocity", -1500)
    wait_until(lambda: abs(servo.register("Present_Velocity") + 1500) <= 2, 2.0, what="wheel at -1500 steps/s")
    start, t0 = servo.present_position(), time.monotonic()
    time.sleep(0.2)
    turned = (start - servo.present_position()) % 4096  # backwards: the position counts down, wrapping
    assert turned == pytest.approx(1500 * (time.monotonic() - t0), abs=120)
    servo.set_register("Torque_Enable", 0)  # torque off: the wheel coasts to a stop
    wait_until(lambda: servo.register("Present_Velocity") == 0, 2.0, what="wheel stopped")


def test_the_loop_drives_lerobots_bus_and_stops_on_timeout_and_on_a_silent_wheel():
    errors: list[str] = []
    with VirtualOmniBase() as base:
        loop = BaseLoop(lambda: WheelBus(base.port), command_timeout_s=0.3, fps=50.0, on_error=errors.append)
        try:
            assert loop.connect()
            assert all(base.wheel(n).velocity_mode and base.wheel(n).torque_enabled for n in WHEEL_NAMES)
            loop.start()
            command = BaseVelocity(0.2, 0.0, 0.0)
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                loop.command(command)
                time.sleep(0.05)
            assert base.body_velocity().x == pytest.approx(0.2, abs=0.01)
            assert loop.odom.x == pytest.approx(0.2 * 1.0, abs=0.06) and abs(loop.odom.y) < 0.005
            wait_until(lambda: not base.goal_raw().any(), 2.0, what="zero wheel goals after the command timeout")
            assert loop.stopped_for_timeout == 1
            loop.command(command)
            wait_until(lambda: base.goal_raw().any(), 2.0, what="moving again")
            base.bus.faults.no_reply.add(8)  # the back wheel stops answering
            wait_until(lambda: not base.goal_raw().any(), 2.0, what="every wheel stopped")
            assert errors and "no status packet" in errors[0] and errors[0].endswith("base stopped")
            wait_until(lambda: not loop.health.connected, 5.0, what="the port dropped")
            base.bus.faults.clear()
            wait_until(lambda: loop.health.connected, 15.0, what="reconnected")
            assert loop.health.reconnects == 1
        finally:
            loop.close()
        assert not any(base.wheel(n).torque_enabled for n in WHEEL_NAMES)  # closing: stopped, torque off


def test_the_arm_and_the_wheels_take_turns_on_lekiwis_one_bus(tmp_path):
    """LeKiwi's arm (ids 1-6) and wheels (7-9) on one emulated bus, each driver with its own LeRobot bus object and
    the port's shared lock (as in lekiwi_node): both loops run with no bus error, the arm reaches its goal and
    the base drives. (Measured once without the shared lock: the wheels never got through, 5 errors, 0 loops.)"""
    from lerobot_ros.hardware.devices import make_follower
    from lerobot_ros.hardware.follower import FollowerArm
    from lerobot_ros.hardware.shared_port import port_lock

    with VirtualOmniBase(port=tmp_path / "lekiwi", with_arm=True) as kiwi:
        assert kiwi.arm is not None
        calibration = kiwi.arm.write_calibration(tmp_path / "arm.json")
        arm = FollowerArm(
            lambda: make_follower("so101_follower", kiwi.port, calibration_file=str(calibration)),
            fps=30.0,
            watchdog_s=0.5,
            bus_lock=port_lock(kiwi.port),
        )
        base = BaseLoop(lambda: WheelBus(kiwi.port), fps=50.0, bus_lock=port_lock(kiwi.port))
        try:
            assert arm.start() and base.connect()
            base.start()

            def both_there() -> bool:
                base.command(BaseVelocity(0.1, 0.0, 0.0))
                arm.command(np.array([0.3, 0.0, 0.0, 0.0, 0.0, 0.0]))
                return base.odom.x > 0.05 and abs(kiwi.arm.joint_positions()["shoulder_pan"] - 0.3) < 0.02

            wait_until(both_there, 15.0, interval=0.05, what="the arm at its goal and the base 5 cm on")
            assert arm.driver.health.errors == 0 and base.health.errors == 0
            assert arm.driver.health.loops > 10 and base.health.loops > 10
        finally:
            base.close()
            arm.close()
