"""robot_node + teleop_node against emulated SO-101 (Feetech) and Koch (Dynamixel) arms over ptys.

The nodes are the real rclpy nodes, created in this process and talking to a probe node over DDS; the
arms are the emulators, driven through LeRobot's robot/teleoperator classes and the real SDKs.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool
from trajectory_msgs.msg import JointTrajectory

from lerobot_ros.codecs import chunk_to_joint_trajectory, numpy_to_float64_multi_array, numpy_to_joint_state
from lerobot_ros.hardware.virtual.arms import MOTOR_NAMES, VirtualArm
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until

CONFIG = Path(__file__).resolve().parents[2] / "config" / "hardware"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("quick_gil_handoff"),
]  # slow: imports LeRobot's robot classes (torch) once per session


def _params(**values):
    return [Parameter(k, value=v) for k, v in values.items()]


def start_arm(kind, role, tmp_path):
    arm = VirtualArm(kind, role, port=tmp_path / f"{kind}_{role}")
    cal = arm.write_calibration(tmp_path / "cal" / f"{role}.json")
    return arm.start(), str(cal)


def robot_node(ros, arm, cal, **extra):
    from lerobot_ros.nodes.robot_node import RobotNode

    params = {
        "robot.type": arm.lerobot_type,
        "robot.port": arm.port,
        "robot.calibration_file": cal,
        "fps": 50.0,
        **extra,
    }
    return ros.add_node(RobotNode(context=ros.context, namespace="/follower", parameter_overrides=_params(**params)))


def teleop_node(ros, arm, cal):
    from lerobot_ros.nodes.teleop_node import TeleopNode

    params = {
        "teleop.type": arm.lerobot_type,
        "teleop.port": arm.port,
        "teleop.calibration_file": cal,
        "fps": 50.0,
    }
    return ros.add_node(TeleopNode(context=ros.context, namespace="/leader", parameter_overrides=_params(**params)))


def close_all(*things):
    for thing in things:
        try:
            thing.close()
        except Exception:
            pass


def latest_positions(collector):
    msg = collector.messages[-1]
    return dict(zip(msg.name, msg.position))


def near(a: dict, b: dict, tol: float, names=MOTOR_NAMES) -> bool:
    return all(abs(a[n] - b[n]) < tol for n in names)


@pytest.mark.parametrize("kind", ["so101", "koch", "omx"])  # omx: through LeRobot's registry, not a preset class
def test_follower_follows_virtual_leader(ros, tmp_path, kind):
    leader, leader_cal = start_arm(kind, "leader", tmp_path)
    follower, follower_cal = start_arm(kind, "follower", tmp_path)
    rnode = tnode = None
    try:
        rnode = robot_node(ros, follower, follower_cal)
        tnode = teleop_node(ros, leader, leader_cal)
        probe = ros.create_node("probe")
        f_states = MessageCollector(probe, JointState, "/follower/joint_states", SENSOR_QOS)
        l_states = MessageCollector(probe, JointState, "/leader/joint_states", SENSOR_QOS)
        diags = MessageCollector(probe, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        f_states.wait_for(1, timeout=30)
        l_states.wait_for(1, timeout=30)
        # Koch's leader gripper is torque-driven (a trigger that springs back): move the other joints by hand.
        moved = {"shoulder_pan": 0.6, "shoulder_lift": -0.4, "elbow_flex": 0.5, "wrist_flex": -0.3, "wrist_roll": 1.2}
        if kind == "so101":
            moved["gripper"] = 0.35
        leader.move_by_hand(moved)
        wait_until(
            lambda: near(follower.joint_positions(), leader.joint_positions(), 0.01), 15, what="follower to follow"
        )
        lead = leader.joint_positions()
        for name, rad in moved.items():
            assert lead[name] == pytest.approx(rad, abs=0.002)
        # joint_states carry the same angles, in radians, in LeRobot's joint order.
        wait_until(lambda: near(latest_positions(f_states), lead, 0.01), 5, what="joint_states")
        assert list(f_states.messages[-1].name) == list(MOTOR_NAMES)
        assert latest_positions(f_states)["wrist_roll"] == pytest.approx(1.2, abs=0.01)
        wait_until(lambda: near(latest_positions(l_states), lead, 0.01), 5, what="leader joint_states")
        # Both nodes report on /diagnostics, with the bus's voltage and temperature.
        for name in ("/leader/teleop_node: leader", "/follower/robot_node: arm"):
            wait_until(
                lambda: any(
                    st.name == name and st.level == DiagnosticStatus.OK for m in diags.messages for st in m.status
                ),
                10,
                what=f"{name} OK",
            )
        leader_status = [st for m in diags.messages for st in m.status if st.name == "/leader/teleop_node: leader"][-1]
        assert "voltage_v" in {kv.key for kv in leader_status.values}
    finally:
        close_all(tnode, rnode, leader, follower)


def test_commands_trajectory_limits_torque_and_shutdown(ros, tmp_path):
    follower, cal = start_arm("so101", "follower", tmp_path)
    node = None
    try:
        node = robot_node(ros, follower, cal, watchdog_s=5.0)
        probe = ros.create_node("probe")
        states = MessageCollector(probe, JointState, "/follower/joint_states", SENSOR_QOS)
        states.wait_for(1, timeout=30)
        cmd = probe.create_publisher(Float64MultiArray, "/follower/commands", RELIABLE_QOS)
        jcmd = probe.create_publisher(JointState, "/follower/joint_command", RELIABLE_QOS)
        traj = probe.create_publisher(JointTrajectory, "/follower/joint_trajectory", RELIABLE_QOS)
        wait_until(
            lambda: cmd.get_subscription_count() > 0 and traj.get_subscription_count() > 0, 10, what="subscribers"
        )

        # 1. commands: a goal far outside the calibrated range stops at the limit, never beyond it.
        target = np.array([0.3, -0.2, 10.0, 0.1, 0.0, -10.0])
        lo, hi = zip(*(follower.limits_rad(n) for n in MOTOR_NAMES))
        deadline = time.monotonic() + 10
        while not near(follower.joint_positions(), dict(zip(MOTOR_NAMES, np.clip(target, lo, hi))), 0.01):
            assert time.monotonic() < deadline, f"follower at {follower.joint_positions()}"
            cmd.publish(numpy_to_float64_multi_array(target))
            time.sleep(0.05)
        for name, goal in follower.goal_registers().items():
            cal_ = follower.calibration[name]
            assert cal_["range_min"] <= goal <= cal_["range_max"], (name, goal)
        assert follower.joint_positions()["elbow_flex"] == pytest.approx(hi[2], abs=0.01)

        # 2. a partial JointState command moves only the named joint.
        before = follower.joint_positions()
        for _ in range(20):
            jcmd.publish(numpy_to_joint_state(["wrist_flex"], [-0.5]))
            time.sleep(0.05)
        wait_until(lambda: abs(follower.joint_positions()["wrist_flex"] + 0.5) < 0.01, 5, what="wrist_flex")
        assert follower.joint_positions()["shoulder_pan"] == pytest.approx(before["shoulder_pan"], abs=0.01)

        # 3. a trajectory: executed on time_from_start, ends at its last point.
        chunk = np.array([[0.1, 0.1, 0.1, 0.1, 0.1, 0.1], [0.2, -0.3, 0.4, 0.0, -0.5, 0.2]])
        traj.publish(chunk_to_joint_trajectory(MOTOR_NAMES, chunk, fps=2.0))
        final = dict(zip(MOTOR_NAMES, chunk[-1]))
        wait_until(lambda: near(follower.joint_positions(), final, 0.01), 10, what="trajectory end")

        # 4. torque service, then torque off on shutdown.
        client = probe.create_client(SetBool, "/follower/set_torque")
        assert client.wait_for_service(timeout_sec=10)
        result = client.call(SetBool.Request(data=False), timeout_sec=10)
        assert result.success and result.message == "torque disabled"
        assert all(s.register("Torque_Enable") == 0 for s in follower.bus.servos.values())
        result = client.call(SetBool.Request(data=True), timeout_sec=10)
        assert result.success
        assert all(s.register("Torque_Enable") == 1 for s in follower.bus.servos.values())
        node.close()
        assert all(s.register("Torque_Enable") == 0 for s in follower.bus.servos.values())
    finally:
        close_all(node, follower)


def _arm_status(diags: MessageCollector) -> DiagnosticStatus | None:
    for msg in reversed(diags.messages):
        for status in msg.status:
            if status.name.startswith("/follower/robot_node"):
                return status
    return None


def _seen(diags: MessageCollector, predicate) -> bool:
    """Whether any robot_node status published so far satisfies `predicate` (the history, not just the last)."""
    return any(
        predicate(status)
        for msg in diags.messages
        for status in msg.status
        if status.name.startswith("/follower/robot_node")
    )


def _value(status, key):
    return {kv.key: kv.value for kv in status.values}[key]


def test_faults_reported_and_recovered(ros, tmp_path):
    follower, cal = start_arm("so101", "follower", tmp_path)
    node = None
    try:
        node = robot_node(ros, follower, cal, diagnostics_period_s=0.2)
        probe = ros.create_node("probe")
        states = MessageCollector(probe, JointState, "/follower/joint_states", SENSOR_QOS)
        diags = MessageCollector(probe, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        states.wait_for(1, timeout=30)
        wait_until(lambda: (s := _arm_status(diags)) is not None and s.level == DiagnosticStatus.OK, 10, what="OK")
        assert float(_value(_arm_status(diags), "voltage_v").split("..")[0]) == pytest.approx(12.0)

        # A motor that stops answering: reported, and the node keeps going once it answers again.
        follower.bus.faults.no_reply.add(3)
        wait_until(lambda: _seen(diags, lambda s: "no status packet" in s.message), 10, what="no-reply fault")
        follower.bus.faults.clear()
        wait_until(lambda: _arm_status(diags).level == DiagnosticStatus.OK, 20, what="recovery")

        # Bad checksums: counted as errors with the SDK's own words.
        errors_before = int(_value(_arm_status(diags), "errors"))
        follower.bus.faults.bad_checksum.add(2)
        wait_until(
            lambda: _seen(diags, lambda s: "Incorrect status packet" in _value(s, "last_error")),
            10,
            what="bad checksum",
        )
        follower.bus.faults.clear()
        wait_until(lambda: _arm_status(diags).level == DiagnosticStatus.OK, 20, what="recovery")
        assert int(_value(_arm_status(diags), "errors")) > errors_before

        # Unplugged: ERROR "disconnected"; plugged back at the same path: reconnects by itself.
        follower.bus.unplug()
        wait_until(lambda: _arm_status(diags).level == DiagnosticStatus.ERROR, 15, what="disconnected")
        assert _arm_status(diags).message.startswith("disconnected")
        follower.bus.plug()
        wait_until(lambda: _arm_status(diags).level == DiagnosticStatus.OK, 30, what="reconnected")
        assert int(_value(_arm_status(diags), "reconnects")) >= 1
        count = len(states.messages)
        states.wait_for(count + 5, timeout=10)
        assert node.arm.driver.torque_enabled and follower.servo("gripper").register("Torque_Enable") == 1
    finally:
        close_all(node, follower)


def test_missing_calibration_is_a_one_line_error(tmp_path, ros_env):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lerobot_ros.nodes.robot_node",
            "--ros-args",
            "--params-file",
            str(CONFIG / "so101_follower.yaml"),
            "-p",
            f"robot.port:={tmp_path / 'nope'}",
            "-p",
            f"robot.calibration_file:={tmp_path / 'absent.json'}",
        ],
        env=ros_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "no calibration file at" in proc.stderr and "absent.json" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_robot_type_rejected(ros, tmp_path):
    from lerobot_ros.nodes.robot_node import RobotNode
    from lerobot_ros.ros.entry import NodeStartupError

    with pytest.raises(
        NodeStartupError,
        match=r"robot_type 'ur5' is not supported: no LeRobot module lerobot\.robots\.ur5; use one of so100_follower",
    ):
        RobotNode(context=ros.context, parameter_overrides=_params(**{"robot.type": "ur5", "robot.port": "/dev/null"}))


def test_watchdog_holds_the_present_position(ros, tmp_path):
    # A slow follower (2 s time constant) so the hold is visible before the goal is reached.
    follower = VirtualArm("so101", "follower", port=tmp_path / "slow", tau_s=2.0)
    cal = str(follower.write_calibration(tmp_path / "cal" / "slow.json"))
    follower.start()
    node = None
    try:
        node = robot_node(ros, follower, cal, watchdog_s=0.3)
        probe = ros.create_node("probe")
        states = MessageCollector(probe, JointState, "/follower/joint_states", SENSOR_QOS)
        states.wait_for(1, timeout=30)
        cmd = probe.create_publisher(Float64MultiArray, "/follower/commands", RELIABLE_QOS)
        wait_until(lambda: cmd.get_subscription_count() > 0, 10, what="subscriber")
        cmd.publish(numpy_to_float64_multi_array([1.0, 0, 0, 0, 0, 0]))  # one command, then silence
        wait_until(lambda: follower.joint_positions()["shoulder_pan"] > 0.02, 10, what="motion to start")
        wait_until(lambda: node.arm.buffer.state(node._now()) == "timeout", 10, what="watchdog")
        mid = sum(follower.calibration["shoulder_pan"][k] for k in ("range_min", "range_max")) / 2

        def goal_rad() -> float:
            return (follower.servo("shoulder_pan").register("Goal_Position") - mid) * 2 * math.pi / 4095

        # the goal is pulled back from 1.0 rad to where the joint was (the hold write lands a tick later)
        wait_until(lambda: goal_rad() < 0.8, 10, what="the hold goal")
        held = goal_rad()
        wait_until(lambda: abs(follower.joint_positions()["shoulder_pan"] - held) < 0.01, 15, what="hold")
    finally:
        close_all(node, follower)


def test_parameters_described_refused_and_applied_live(ros, tmp_path):
    """From another rclpy context, as `ros2 param` would: every parameter is described, the port is
    read-only, and the safety limits, watchdog and loop rate change the running node."""
    from lerobot_ros.configs import names
    from lerobot_ros.hardware.config import RobotNodeConfig as RobotParams
    from lerobot_ros.ros.runtime import RosRuntime
    from lerobot_ros.testing.param_probe import ParamProbe, assert_all_described

    follower, cal = start_arm("so101", "follower", tmp_path)
    node = None
    try:
        node = robot_node(ros, follower, cal, watchdog_s=5.0)
        with RosRuntime() as other:
            probe = ParamProbe(other, "/follower/robot_node")
            described = assert_all_described(probe)
            assert set(names(RobotParams)) <= set(described)
            assert described["robot.port"].read_only and not described["robot.max_relative_target"].read_only
            refused = probe.set("robot.port", "/dev/ttyUSB9")
            assert not refused.successful and "read-only" in refused.reason and probe.get("robot.port") == follower.port

            assert probe.set("fps", 40).successful and node.arm.loop.period_s == pytest.approx(1 / 40)
            assert probe.set("watchdog_s", 0.4).successful and node.arm.buffer.watchdog_ns == 400_000_000
            assert not probe.set("watchdog_s", 0.0).successful and node.arm.buffer.watchdog_ns == 400_000_000

            # max_relative_target (LeRobot degrees) caps every goal the arm gets from now on
            assert probe.set("robot.max_relative_target", 2.0).successful
            assert node.arm.driver.device.config.max_relative_target == 2.0
            pan = follower.servo("shoulder_pan")
            tick_deg = 360 / 4096
            probe_node = ros.create_node("probe")
            cmd = probe_node.create_publisher(Float64MultiArray, "/follower/commands", RELIABLE_QOS)
            wait_until(lambda: cmd.get_subscription_count() > 0, 10, what="subscriber")
            start = pan.present_position()
            gaps = []
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                cmd.publish(numpy_to_float64_multi_array([1.0, 0, 0, 0, 0, 0]))  # ~57 degrees away
                gaps.append(abs(pan.register("Goal_Position") - pan.present_position()) * tick_deg)
                time.sleep(0.02)
            assert pan.present_position() != start  # it moves ...
            assert max(gaps) <= 2.0 + 2 * tick_deg  # ... never more than 2 degrees ahead of where it is
            assert probe.set("robot.max_relative_target", 0.0).successful
            assert node.arm.driver.device.config.max_relative_target is None  # 0 = off
    finally:
        close_all(node, follower)


def test_teleop_parameters_described_and_rate_applied_live(ros, tmp_path):
    from lerobot_ros.configs import names
    from lerobot_ros.hardware.config import TeleopNodeConfig as TeleopParams
    from lerobot_ros.ros.runtime import RosRuntime
    from lerobot_ros.testing.param_probe import ParamProbe, assert_all_described

    leader, cal = start_arm("so101", "leader", tmp_path)
    tnode = None
    try:
        tnode = teleop_node(ros, leader, cal)
        with RosRuntime() as other:
            probe = ParamProbe(other, "/leader/teleop_node")
            described = assert_all_described(probe)
            assert set(names(TeleopParams)) <= set(described)
            refused = probe.set("commands_topic", "/other/commands")
            assert not refused.successful and "read-only" in refused.reason
            assert probe.set("fps", 20).successful and tnode.tick_timer.timer_period_ns == 50_000_000
    finally:
        close_all(tnode, leader)
