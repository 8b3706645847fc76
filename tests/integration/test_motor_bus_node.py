"""motor_bus_node on an emulated Dynamixel chain of custom ids/models, calibrated from the motors."""

from __future__ import annotations

import math

import pytest
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import numpy_to_float64_multi_array
from lerobot_ros.hardware.virtual import VirtualBus, VirtualServo
from lerobot_ros.ros.entry import NodeStartupError
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until

TICKS_PER_RAD = 4095 / (2 * math.pi)
pytestmark = pytest.mark.usefixtures("quick_gil_handoff")


def node(ros, **params):
    from lerobot_ros.nodes.motor_bus_node import MotorBusNode

    overrides = [Parameter(k, value=v) for k, v in params.items()]
    return ros.add_node(MotorBusNode(context=ros.context, namespace="/custom", parameter_overrides=overrides))


def test_custom_bus_reads_commands_and_limits(ros, tmp_path):
    servos = [VirtualServo(11, "xl330-m288"), VirtualServo(12, "xl430-w250")]
    servos[0].set_register("Min_Position_Limit", 1000)
    servos[0].set_register("Max_Position_Limit", 3000)  # mid 2000
    servos[0].move_by_hand(2000)
    servos[1].move_by_hand(2047)
    bus = VirtualBus(servos, port=tmp_path / "bus").start()
    n = None
    try:
        n = node(
            ros,
            bus_type="dynamixel",
            port=bus.port,
            motor_names=["pan", "tilt"],
            motor_ids=[11, 12],
            motor_models=["xl330-m288", "xl430-w250"],
            fps=50.0,
        )
        probe = ros.create_node("probe")
        states = MessageCollector(probe, JointState, "/custom/joint_states", SENSOR_QOS)
        msg = states.wait_for(1, timeout=30)[0]
        assert list(msg.name) == ["pan", "tilt"] and len(msg.velocity) == 2 and len(msg.effort) == 2
        assert msg.position[0] == pytest.approx(0.0, abs=0.002)  # mid of the motor's own limits
        pub = probe.create_publisher(Float64MultiArray, "/custom/commands", RELIABLE_QOS)
        wait_until(lambda: pub.get_subscription_count() > 0, 10, what="subscriber")

        # pan beyond its upper limit (1000 ticks above mid): stops at the limit.
        def reached():
            pub.publish(numpy_to_float64_multi_array([5.0, -0.5]))
            return (
                abs(servos[0].present_position() - 3000) <= 1
                and abs(servos[1].present_position() - (2047.5 - 0.5 * TICKS_PER_RAD)) <= 2
            )

        wait_until(reached, 15, interval=0.05, what="goals reached")
        assert servos[0].register("Goal_Position") <= 3000
    finally:
        if n is not None:
            n.close()
        bus.close()
    assert servos[0].register("Torque_Enable") == 0  # torque off on shutdown


def test_bad_motor_lists_are_startup_errors(ros):
    with pytest.raises(NodeStartupError, match="must be non-empty lists of equal length"):
        node(
            ros,
            bus_type="dynamixel",
            port="/dev/null",
            motor_names=["a", "b"],
            motor_ids=[1],
            motor_models=["xl330-m288"],
        )
    with pytest.raises(NodeStartupError, match=r"unknown feetech motor model\(s\) \['xl330-m288'\]"):
        node(ros, bus_type="feetech", port="/dev/null", motor_names=["a"], motor_ids=[1], motor_models=["xl330-m288"])


def test_parameters_described_and_the_watchdog_applied_live(ros, tmp_path):
    from lerobot_ros.configs import names
    from lerobot_ros.hardware.config import MotorBusConfig as MotorBusParams
    from lerobot_ros.ros.runtime import RosRuntime
    from lerobot_ros.testing.param_probe import ParamProbe, assert_all_described

    bus = VirtualBus([VirtualServo(11, "xl330-m288")], port=tmp_path / "bus").start()
    n = None
    try:
        n = node(
            ros,
            bus_type="dynamixel",
            port=bus.port,
            motor_names=["pan"],
            motor_ids=[11],
            motor_models=["xl330-m288"],
            fps=50,
        )  # an integer rate: accepted for the double
        with RosRuntime() as other:
            probe = ParamProbe(other, "/custom/motor_bus_node")
            described = assert_all_described(probe)
            assert set(names(MotorBusParams)) <= set(described)
            assert probe.get("motor_ids") == [11] and probe.get("fps") == 50.0
            refused = probe.set("motor_ids", [12])
            assert not refused.successful and "read-only" in refused.reason
            assert probe.set("watchdog_s", 2).successful and n.arm.buffer.watchdog_ns == 2_000_000_000
    finally:
        if n is not None:
            n.close()
        bus.close()
