"""bimanual_node over DDS: the pair's joint_states, commands split to the arms, the leaders' halves joined, and the
whole pair stopped when one arm goes silent. The arms here are probe publishers of joint_states (said here as the
project asks: the e2e test drives real robot_nodes on emulated servos through the launch file)."""

from __future__ import annotations

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import numpy_to_float64_multi_array, numpy_to_joint_state
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until
from lerobot_ros.testing.diagnostics import newest_status

ARM = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]


class Sides:
    def __init__(self, ros, stale_s: float = 0.5):
        from lerobot_ros.nodes.bimanual_node import BimanualNode

        params = [Parameter("stale_s", value=stale_s), Parameter("diagnostics_period_s", value=0.1)]
        self.node = ros.add_node(BimanualNode(context=ros.context, namespace="/bimanual", parameter_overrides=params))
        probe = ros.create_node("pair_probe")
        self.state_pubs = {
            s: probe.create_publisher(JointState, f"/{s}/joint_states", SENSOR_QOS) for s in ("left", "right")
        }
        self.teleop_pubs = {
            s: probe.create_publisher(Float64MultiArray, f"/bimanual/teleop/{s}", RELIABLE_QOS)
            for s in ("left", "right")
        }
        self.pair_cmd = probe.create_publisher(Float64MultiArray, "/bimanual/commands", RELIABLE_QOS)
        self.pair_state = MessageCollector(probe, JointState, "/bimanual/joint_states", SENSOR_QOS)
        self.pair_commands = MessageCollector(probe, Float64MultiArray, "/bimanual/commands", RELIABLE_QOS)
        self.arm_cmds = {
            s: MessageCollector(probe, Float64MultiArray, f"/{s}/commands", RELIABLE_QOS) for s in ("left", "right")
        }
        self.diagnostics = MessageCollector(probe, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        wait_until(
            lambda: (
                all(
                    p.get_subscription_count()
                    for p in (*self.state_pubs.values(), *self.teleop_pubs.values(), self.pair_cmd)
                )
                and all(c.subscription.get_publisher_count() for c in self.arm_cmds.values())
            ),
            20,
            what="bimanual_node matched",
        )

    def arms_report(self, left=None, right=None) -> None:
        for side, values in (("left", left), ("right", right)):
            if values is not None:
                self.state_pubs[side].publish(numpy_to_joint_state(ARM, values, stamp_ns=1_000))

    def status(self) -> dict:
        return newest_status(self.diagnostics, "/bimanual/bimanual_node: pair")


def test_the_pair_is_one_robot_with_lerobots_names(ros):
    sides = Sides(ros)

    def joined() -> bool:
        sides.arms_report(left=np.arange(6) * 0.1, right=-np.arange(6) * 0.1)
        return bool(sides.pair_state.messages)

    wait_until(joined, 10, interval=0.05, what="the pair's joint_states")
    msg = sides.pair_state.messages[-1]
    assert list(msg.name) == [f"left_{j}" for j in ARM] + [f"right_{j}" for j in ARM]
    assert np.allclose(msg.position, np.concatenate([np.arange(6) * 0.1, -np.arange(6) * 0.1]))

    sides.pair_cmd.publish(numpy_to_float64_multi_array(np.arange(12) / 10))
    sides.arm_cmds["right"].wait_for(1, timeout=10)
    assert np.allclose(sides.arm_cmds["left"].wait_for(1, timeout=10)[0].data, np.arange(6) / 10)
    assert np.allclose(sides.arm_cmds["right"].messages[0].data, np.arange(6, 12) / 10)

    # two leaders: their halves become one pair command (what a recorder reads as the action), then the arms'
    sides.teleop_pubs["left"].publish(numpy_to_float64_multi_array(np.full(6, 0.5)))
    sides.teleop_pubs["right"].publish(numpy_to_float64_multi_array(np.full(6, -0.5)))
    wait_until(lambda: len(sides.arm_cmds["right"].messages) >= 2, 10, what="the leaders' command at the arms")
    teleop = [m for m in sides.pair_commands.messages if np.allclose(m.data, [0.5] * 6 + [-0.5] * 6)]
    assert teleop, [list(m.data) for m in sides.pair_commands.messages]
    assert np.allclose(sides.arm_cmds["right"].messages[-1].data, [-0.5] * 6)


def test_a_silent_arm_stops_both_and_nan_is_refused(ros):
    sides = Sides(ros, stale_s=0.3)
    wait_until(
        lambda: sides.arms_report(np.zeros(6), np.zeros(6)) or sides.status().get("level") == 0,
        10,
        interval=0.05,
        what="both arms alive",
    )
    nan = np.zeros(12)
    nan[3] = np.nan
    sides.pair_cmd.publish(numpy_to_float64_multi_array(nan))
    wait_until(lambda: sides.status().get("commands_refused") == "1", 10, what="the NaN refused")
    assert sides.status()["last_refusal"] == "value 3 is nan: not a number; command refused"

    # the right arm goes silent (its driver died, its bus unplugged); the left one keeps reporting
    wait_until(
        lambda: sides.arms_report(left=np.zeros(6)) or sides.status().get("level") == 2, 10, interval=0.05, what="ERROR"
    )
    assert sides.status()["message"] == "no joint_states from the right arm: both arms hold"
    sent_before = {s: len(c.messages) for s, c in sides.arm_cmds.items()}
    sides.pair_cmd.publish(numpy_to_float64_multi_array(np.ones(12)))
    wait_until(lambda: sides.status().get("commands_refused") == "2", 10, what="the command refused")
    assert {s: len(c.messages) for s, c in sides.arm_cmds.items()} == sent_before  # neither arm got it
    assert sides.status()["last_refusal"].startswith("no joint_states from the right arm")

    # the arm is back: commands flow again, to both
    wait_until(
        lambda: sides.arms_report(np.zeros(6), np.zeros(6)) or sides.status().get("level") == 0,
        10,
        interval=0.05,
        what="both alive again",
    )
    sides.pair_cmd.publish(numpy_to_float64_multi_array(np.ones(12)))
    wait_until(
        lambda: all(len(c.messages) > sent_before[s] for s, c in sides.arm_cmds.items()), 10, what="both arms commanded"
    )


@pytest.mark.parametrize("side", ["left", "right"])
def test_the_pair_publishes_nothing_until_both_arms_reported(ros, side):
    sides = Sides(ros)
    wait_until(
        lambda: sides.arms_report(**{side: np.zeros(6)}) or sides.status().get("arms_alive") == side,
        10,
        interval=0.05,
        what=f"the {side} arm alive on /diagnostics",
    )
    assert sides.status()["level"] == 2 and not sides.pair_state.messages
