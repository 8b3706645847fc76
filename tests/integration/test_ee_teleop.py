"""End-effector teleoperation: tip jogging through the SO-101 URDF (library, no ROS), gamepad and key mappings,
and ee_teleop_node driving the MuJoCo twin's tool tip along a commanded direction from Joy messages and from
terminal keys (a pty), holding when the pad goes silent."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time

import numpy as np
import pytest
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState, Joy
from std_msgs.msg import Float64MultiArray

from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until
from lerobot_ros.teleop import EndEffectorJog, InputWatch, JoyMapping, KeyJog

JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
FOLDED = np.array([0.0, -1.0, 1.0, 0.5, 0.0, 0.0])
VENV_BIN = os.path.dirname(sys.executable)


@pytest.fixture(scope="module")
def jog(so101):
    return EndEffectorJog(so101, "gripper_frame_link", JOINTS, max_joint_step=0.05)


@pytest.mark.parametrize("direction", [(1, 0, 0), (0, 1, 0), (0, 0, 1), (-1, 0, 0), (0, 0, -1)])
def test_tip_moves_along_the_commanded_direction(jog, direction):
    q = FOLDED.copy()
    start = jog.tip_position(q)
    d = 0.002 * np.asarray(direction, dtype=float)
    for _ in range(25):
        q = jog.step(q, d)
    moved = jog.tip_position(q) - start
    assert np.linalg.norm(moved - 25 * d) < 0.002, moved  # 5 cm commanded, within 2 mm
    assert q[5] == FOLDED[5]  # the gripper did not move


def test_gripper_steps_and_stays_inside_its_limits(jog):
    q = jog.step(FOLDED, (0, 0, 0), gripper_delta=0.03)
    assert q[5] == pytest.approx(0.03) and np.allclose(q[:5], FOLDED[:5])
    for _ in range(200):
        q = jog.step(q, (0, 0, 0), gripper_delta=0.05)
    assert q[5] == pytest.approx(jog.limits.upper[5])


def test_unreachable_target_is_clamped_without_a_jump(jog):
    q = FOLDED.copy()
    for _ in range(300):  # 3 m forward: far outside the arm's reach
        nxt = jog.step(q, (0.01, 0, 0))
        assert np.all(np.abs(nxt - q) <= 0.05 + 1e-12)  # never more than max_joint_step per call
        assert np.all(nxt >= jog.limits.lower - 1e-12) and np.all(nxt <= jog.limits.upper + 1e-12)
        q = nxt
    far = jog.tip_position(q)
    assert 0.4 < far[0] < 0.5  # at the edge of the workspace (reach ~0.47 m), not beyond
    again = jog.step(q, (0.01, 0, 0))
    assert np.linalg.norm(jog.tip_position(again) - far) < 0.005  # stays there, still on the commanded line


def test_calibrated_ranges_narrow_the_urdf_limits(so101):
    jog = EndEffectorJog(so101, "gripper_frame_link", JOINTS, lower=[-0.2] * 6, upper=[0.2] * 6)
    q = np.zeros(6)
    for _ in range(100):
        q = jog.step(q, (0, 0.01, 0))
    assert np.all(np.abs(q) <= 0.2 + 1e-12) and abs(q[0]) == pytest.approx(0.2, abs=0.01)  # pan at its bound
    with pytest.raises(ValueError, match=r"joint limits leave no range for \['shoulder_pan'\]"):
        EndEffectorJog(so101, "gripper_frame_link", JOINTS, lower=[3.0] + [-1.0] * 5)


def test_unknown_tip_or_joint_names_say_what_exists(so101):
    from lerobot_ros.viz.urdf_kinematics import UrdfError

    with pytest.raises(UrdfError, match=r"link 'claw' is not in the URDF"):
        EndEffectorJog(so101, "claw", JOINTS)
    with pytest.raises(UrdfError, match=r"joints \['elbow'\] are not in the URDF"):
        EndEffectorJog(so101, "gripper_frame_link", ["shoulder_pan", "elbow"])


def test_joy_mapping_deadzone_deadman_and_bad_values():
    m = JoyMapping(speed=0.1, gripper_speed=2.0)
    axes = [0.05, 1.0, 0.0, 0.0, -0.5]
    cmd = m.command(axes, [0, 0, 0, 0, 0, 1])
    assert cmd.velocity == pytest.approx((0.1, 0.0, -0.05)) and cmd.gripper == 2.0  # x from axis 1, y in deadzone
    assert m.command([float("nan"), float("inf")], []).idle  # non-finite axes count as centred
    held = JoyMapping(deadman=0)
    assert held.command([0.0, 1.0], [0]).idle and not held.command([0.0, 1.0], [1]).idle
    assert JoyMapping().command([], []).idle  # a pad with fewer axes: nothing moves


def test_keys_hold_their_direction_through_auto_repeat_only():
    keys = KeyJog(speed=0.05, hold_s=0.25)
    assert keys.press(b"w", 10.0) and keys.command(10.1).velocity == (0.05, 0.0, 0.0)
    assert keys.command(10.3).idle  # no repeat within hold_s: the key was released
    assert keys.press(b"\x1b[D", 11.0) and keys.command(11.0).velocity == (0.0, 0.05, 0.0)
    assert keys.press(b" ", 11.1) and keys.command(11.1).idle  # space stops at once
    assert not keys.press(b"x", 12.0) and keys.command(12.0).idle
    assert keys.press(b"c", 13.0) and keys.command(13.0).gripper == -1.0


def test_input_watch():
    w = InputWatch(0.5)
    assert w.stale(0.0)
    w.seen(1.0)
    assert not w.stale(1.4) and w.stale(1.6)


def test_loop_starts_from_the_measured_pose_and_holds_when_the_pad_goes_silent(jog):
    from lerobot_ros.teleop.loop import EeTeleopLoop

    loop = EeTeleopLoop(jog, 1 / 30, "joy", JoyMapping(speed=0.06), KeyJog(), InputWatch(0.3))
    assert loop.tick(0.0) == (None, "no joint_states yet")
    loop.on_pose(FOLDED)
    first = loop.tick(0.0)
    assert np.array_equal(first.target, FOLDED) and first.holding == "no Joy message yet"
    loop.on_joy([0.0, 1.0], [], 0.0)  # full stick forward
    moving = loop.tick(0.1)
    assert moving.holding is None and jog.tip_position(moving.target)[0] > jog.tip_position(FOLDED)[0] + 0.0015
    loop.on_pose(FOLDED)  # a sagging servo reports the old pose: the target integrates from itself, not from it
    assert jog.tip_position(loop.tick(0.2).target)[0] > jog.tip_position(moving.target)[0]
    held = loop.tick(0.6)  # 0.6 s after the last Joy message (timeout 0.3)
    assert held.holding == "no Joy message for 0.3 s (pad unplugged or driver stopped)"
    assert np.array_equal(loop.tick(0.7).target, held.target)


def test_keys_are_never_silent_their_commands_expire(jog):
    from lerobot_ros.teleop.loop import EeTeleopLoop

    loop = EeTeleopLoop(jog, 1 / 30, "keyboard", JoyMapping(), KeyJog(speed=0.06, hold_s=0.25), InputWatch(0.3))
    loop.on_pose(FOLDED)
    assert loop.tick(0.0).holding is None
    loop.on_key(b"r", 1.0)
    up = loop.tick(1.1).target
    assert jog.tip_position(up)[2] > jog.tip_position(FOLDED)[2]
    assert np.array_equal(loop.tick(2.0).target, up) and loop.tick(2.0).holding is None  # expired, not stale
    with pytest.raises(ValueError, match="input must be joy or keyboard, got 'mouse'"):
        EeTeleopLoop(jog, 1 / 30, "mouse", JoyMapping(), KeyJog(), InputWatch())


# ---- over DDS, on the MuJoCo twin ---------------------------------------------------------------
def _twin(ros, namespace):
    from lerobot_ros.nodes.sim_bridge_node import SimBridgeNode

    overrides = [
        Parameter("env.type", value="so101"),
        Parameter("mode", value="realtime"),
        Parameter("fps", value=30.0),
        Parameter("cameras", Parameter.Type.STRING_ARRAY, []),
        Parameter("publish_clock", value=False),
        Parameter("env.observation_width", value=32),
        Parameter("env.observation_height", value=24),
        Parameter("env.episode_length", value=100000),
    ]  # no time-out while a slow process starts
    node = SimBridgeNode(context=ros.context, namespace=namespace, parameter_overrides=overrides)
    ros.add_node(node)
    return node


def _tip(jog, msgs) -> np.ndarray:
    from lerobot_ros.codecs import joint_state_to_numpy

    return jog.tip_position(joint_state_to_numpy(msgs[-1], JOINTS))


@pytest.mark.slow
def test_joy_drives_the_twin_tip_and_holds_when_the_pad_stops(ros, jog):
    from lerobot_ros.nodes.ee_teleop_node import EeTeleop

    bridge = _twin(ros, "/twin")
    teleop = EeTeleop(
        context=ros.context,
        namespace="/twin",
        parameter_overrides=[
            Parameter("joy_topic", value="/twin_joy"),
            Parameter("speed", value=0.06),
            Parameter("input_timeout_s", value=0.3),
        ],
    )
    ros.add_node(teleop)
    probe = ros.create_node("probe")
    states = MessageCollector(probe, JointState, "/twin/joint_states", SENSOR_QOS)
    commands = MessageCollector(probe, Float64MultiArray, "/twin/commands", RELIABLE_QOS)
    joy = probe.create_publisher(Joy, "/twin_joy", SENSOR_QOS)
    try:
        wait_until(
            lambda: len(commands.messages) > 10 and len(states.messages) > 10, 60, what="teleop holding the twin"
        )
        time.sleep(1.0)  # let the arm settle on its held pose
        start = _tip(jog, states.messages)
        t_end = time.monotonic() + 2.0
        while time.monotonic() < t_end:  # full stick backwards (-x) for 2 s, 30 Hz like a joy driver
            joy.publish(Joy(axes=[0.0, -1.0, 0.0, 0.0, 0.0], buttons=[0] * 6))
            time.sleep(1 / 30)
        # pad silent: after input_timeout_s (0.3) the target stops; wait until 5 commands in a row are one target
        wait_until(lambda: len({tuple(m.data) for m in commands.messages[-5:]}) == 1, 10, what="the target held")
        held_from = len(commands.messages)
        time.sleep(0.6)
        moved = _tip(jog, states.messages) - start
        assert moved[0] < -0.05, moved  # ~0.12 m commanded; the position servos follow with a lag
        assert np.linalg.norm(moved[1:]) < 0.35 * abs(moved[0]), moved  # along the commanded line
        late = [m.data.tolist() for m in commands.messages[held_from - 1 :]]
        assert len(late) > 10 and all(c == late[0] for c in late)  # held from then on: one target every period
    finally:
        teleop.destroy_node()
        bridge.close()


@pytest.mark.slow
def test_terminal_keys_drive_the_twin_tip(ros, ros_env, jog):
    bridge = _twin(ros, "/keys")
    probe = ros.create_node("probe_keys")
    states = MessageCollector(probe, JointState, "/keys/joint_states", SENSOR_QOS)
    commands = MessageCollector(probe, Float64MultiArray, "/keys/commands", RELIABLE_QOS)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [
            os.path.join(VENV_BIN, "ee_teleop_node"),
            "--ros-args",
            "-r",
            "__ns:=/keys",
            "-p",
            "input:=keyboard",
            "-p",
            "speed:=0.06",
        ],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=ros_env,
    )
    os.close(follower)
    try:
        wait_until(lambda: len(commands.messages) > 10 and len(states.messages) > 10, 120, what="keyboard teleop up")
        time.sleep(1.0)
        start = _tip(jog, states.messages)
        t_end = time.monotonic() + 2.0
        while time.monotonic() < t_end:  # 'r' held: the terminal auto-repeats it ~30 times a second
            os.write(leader, b"r")
            time.sleep(1 / 30)
        time.sleep(1.0)
        moved = _tip(jog, states.messages) - start
        assert moved[2] > 0.05, moved
        assert np.linalg.norm(moved[:2]) < 0.35 * moved[2], moved
    finally:
        proc.terminate()
        out = proc.communicate(timeout=30)[0].decode(errors="replace")
        os.close(leader)
        bridge.close()
    assert "Traceback" not in out, out
