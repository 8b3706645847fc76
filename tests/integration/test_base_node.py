"""base_node (LeKiwi's omniwheel base) over DDS on emulated wheel servos that LeRobot's Feetech bus drives in
velocity mode: a cmd_vel square whose odometry closes, the stop when commands stop, refused and clamped
commands, a wheel that stops answering, all on /diagnostics."""

from __future__ import annotations

import math
import time

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from lerobot_ros.hardware.virtual.base import VirtualOmniBase
from lerobot_ros.mobile.omni import WHEEL_NAMES
from lerobot_ros.ros.entry import NodeStartupError
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until
from lerobot_ros.testing.base_driving import drive_until, go_to, odom_pose, odom_speed, twist
from lerobot_ros.testing.diagnostics import newest_status

pytestmark = pytest.mark.usefixtures("quick_gil_handoff")
NS = "/kiwi"


class Base:
    """base_node in this process on a virtual base, and a probe node: cmd_vel out, odom / joint_states /
    diagnostics in."""

    def __init__(self, ros, port: str, **params):
        from lerobot_ros.nodes.base_node import BaseNode

        overrides = [Parameter(k, value=v) for k, v in {"port": port, **params}.items()]
        self.node = ros.add_node(BaseNode(context=ros.context, namespace=NS, parameter_overrides=overrides))
        probe = ros.create_node("base_probe")
        self.odom = MessageCollector(probe, Odometry, f"{NS}/odom", SENSOR_QOS)
        self.states = MessageCollector(probe, JointState, f"{NS}/joint_states", SENSOR_QOS)
        self.diagnostics = MessageCollector(probe, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.pub = probe.create_publisher(Twist, f"{NS}/cmd_vel", RELIABLE_QOS)
        wait_until(lambda: self.pub.get_subscription_count() > 0, 20, what="base_node subscribed to cmd_vel")
        self.odom.wait_for(1, timeout=20)

    def pose(self) -> tuple[float, float, float]:
        return odom_pose(self.odom.messages[-1])

    def drive(self, msg: Twist, until, timeout: float = 20.0) -> None:
        """Publish `msg` at 20 Hz until `until()` holds (what a simple teleop or planner does)."""
        drive_until(self.pub.publish, msg, until, timeout)

    def go_to(self, goal: tuple[float, float], timeout: float = 60.0) -> None:
        go_to(self.pub.publish, self.pose, goal, timeout)

    def stop_and_settle(self) -> None:
        self.pub.publish(twist())
        wait_until(lambda: self.speed() < 1e-3, 5.0, what="the base at rest")

    def speed(self) -> float:
        return odom_speed(self.odom.messages[-1])

    def status(self) -> dict:
        """The base's newest /diagnostics status (as a dict of values, plus level and message)."""
        return newest_status(self.diagnostics, f"{NS}/base_node: base")

    def close(self) -> None:
        self.node.close()


@pytest.fixture
def kiwi(tmp_path):
    with VirtualOmniBase(port=tmp_path / "lekiwi_base") as base:
        yield base


def test_a_cmd_vel_square_closes_in_odometry(ros, kiwi):
    """Forward, left, back, right, 0.3 m each, as a simple planner drives (toward the corner, slowing near it),
    then a full turn on the spot. Odometry (integrated from the wheels' reported speeds at 50 Hz) agrees with the
    wheels' real travel in the emulator at every corner (within 1 cm), the square closes (within 2 cm and
    3 degrees), and each side goes where REP 103 says (x forward, y left)."""
    base = Base(ros, kiwi.port, diagnostics_period_s=0.2)
    try:
        start = kiwi.turned_steps()
        corners, truth = [], []
        for goal in ((0.3, 0.0), (0.3, 0.3), (0.0, 0.3), (0.0, 0.0)):
            base.go_to(goal)
            base.stop_and_settle()
            corners.append(base.pose())
            real = kiwi.displacement(start)
            truth.append((real.x, real.y))
        for (x, y, _), (tx, ty), goal in zip(corners, truth, ((0.3, 0.0), (0.3, 0.3), (0.0, 0.3), (0.0, 0.0))):
            assert math.dist((x, y), (tx, ty)) < 0.01, (x, y, tx, ty)  # odometry = the wheels' real travel
            assert math.dist((tx, ty), goal) < 0.02, (tx, ty, goal)  # the base went where REP 103 says
        x, y, yaw = corners[-1]
        assert math.hypot(x, y) < 0.02 and abs(yaw) < math.radians(3)
        turn = {"last": base.pose()[2], "total": 0.0}

        def once_round() -> bool:  # yaw unwrapped: odom's yaw stays in (-pi, pi]
            yaw = base.pose()[2]
            turn["total"] += math.remainder(yaw - turn["last"], math.tau)
            turn["last"] = yaw
            return turn["total"] >= math.tau - 0.1

        base.drive(twist(wz=1.0), once_round)
        base.stop_and_settle()
        assert abs(base.pose()[2]) < math.radians(15)  # once round: stopped a little past zero, as the ramp allows
        state = base.states.messages[-1]
        assert list(state.name) == list(WHEEL_NAMES) and len(state.velocity) == 3
        status = base.status()
        assert status["level"] == 0 and status["command_state"] in ("active", "none (stopped)")
        assert float(status["odom_distance_m"]) == pytest.approx(1.2, abs=0.03)  # four sides of 0.3 m
    finally:
        base.close()


def test_the_base_stops_when_commands_stop(ros, kiwi):
    base = Base(ros, kiwi.port, command_timeout_s=0.4)
    try:
        base.drive(twist(0.2), lambda: base.speed() > 0.19)
        last = time.monotonic()
        base.pub.publish(twist(0.2))
        wait_until(lambda: not kiwi.goal_raw().any(), 5.0, what="zero wheel goals")
        stopped_after = time.monotonic() - last
        # the timeout, then the 1 m/s^2 ramp from 0.2 m/s (0.2 s), give or take a tick and DDS
        assert 0.4 <= stopped_after < 0.4 + 0.2 + 0.6, stopped_after
        wait_until(lambda: base.status().get("stops_for_timeout") == "1", 5.0, what="the stop on /diagnostics")
    finally:
        base.close()


def test_refused_and_clamped_commands(ros, kiwi):
    base = Base(ros, kiwi.port, max_linear_velocity=0.2)
    try:
        base.drive(twist(3.0, 4.0), lambda: base.speed() > 0.19)  # 5 m/s asked: scaled to 0.2, direction kept
        t = base.odom.messages[-1].twist.twist
        assert math.hypot(t.linear.x, t.linear.y) == pytest.approx(0.2, abs=0.01)
        assert math.atan2(t.linear.y, t.linear.x) == pytest.approx(math.atan2(4, 3), abs=0.02)
        base.pub.publish(twist(float("nan"), 0.0, 0.0))
        wait_until(lambda: not kiwi.goal_raw().any(), 1.0, what="stopped at once by a NaN command")
        wait_until(lambda: base.status().get("commands_refused") == "1", 5.0, what="the refusal on /diagnostics")
        status = base.status()
        assert status["last_refusal"] == "non-finite x.vel" and int(status["commands_clamped"]) >= 1
    finally:
        base.close()


def test_a_wheel_that_stops_answering_stops_the_base_then_it_reconnects(ros, kiwi):
    base = Base(ros, kiwi.port, diagnostics_period_s=0.2)
    try:
        base.drive(twist(0.0, 0.0, 1.0), lambda: base.speed() > 0.9)
        kiwi.bus.faults.no_reply.add(9)  # the right wheel
        wait_until(lambda: not kiwi.goal_raw().any(), 2.0, what="every wheel goal zero")
        wait_until(lambda: base.status().get("level") == 2, 10.0, what="ERROR on /diagnostics")
        assert "no status packet" in base.status()["message"]
        kiwi.bus.faults.clear()
        wait_until(lambda: base.status().get("level") == 0, 20.0, what="reconnected")
        assert base.status()["reconnects"] == "1"
        base.drive(twist(0.1), lambda: base.speed() > 0.09)  # and it drives again
    finally:
        base.close()


def test_a_missing_port_is_one_line(ros):
    from lerobot_ros.nodes.base_node import BaseNode

    with pytest.raises(NodeStartupError, match=r"^parameter 'port' is empty: set it to the wheels' serial port"):
        BaseNode(context=ros.context)
