"""The composed MuJoCo twins behind sim_bridge_node over real DDS, with the real pair's and LeKiwi's joining nodes on
top: the LeKiwi twin driven around a cmd_vel square by odometry, stopping when commands stop; two twin arms driven
through bimanual_node exactly as the real pair (the pair's commands, each arm's own topics, the leaders' halves)."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import numpy_to_float64_multi_array
from lerobot_ros.hardware.lekiwi import ARM_JOINTS
from lerobot_ros.nodes.bimanual_node import BimanualNode
from lerobot_ros.nodes.lekiwi_robot_node import LeKiwiRobotNode
from lerobot_ros.nodes.sim_bridge_node import SimBridgeNode
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until
from lerobot_ros.sim.bi_so101_twin import PAIR_JOINTS
from lerobot_ros.testing.base_driving import drive_until, go_to, odom_pose, odom_speed, twist

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("quick_gil_handoff")]


def bridge_params(env: str) -> list[Parameter]:
    return [
        Parameter("env.type", value=env),
        Parameter("mode", value="realtime"),
        Parameter("episode_limit", value="marked"),
        Parameter("cameras", Parameter.Type.STRING_ARRAY, ["none"]),
        Parameter("publish_clock", value=False),
    ]


@pytest.fixture
def closing():
    made = []
    yield made
    for node in reversed(made):
        node.close() if hasattr(node, "close") else None


def test_the_lekiwi_twin_drives_a_cmd_vel_square_and_stops_when_commands_stop(ros, closing):
    ns = "/kiwi_twin"
    bridge = SimBridgeNode(context=ros.context, namespace=ns, parameter_overrides=bridge_params("lekiwi"))
    closing.append(bridge)
    ros.add_node(bridge)
    robot = ros.add_node(LeKiwiRobotNode(context=ros.context, namespace=ns))
    probe = ros.create_node("kiwi_twin_probe")
    odom = MessageCollector(probe, Odometry, f"{ns}/odom", SENSOR_QOS)
    state = MessageCollector(probe, Float64MultiArray, f"{ns}/robot_state", SENSOR_QOS)
    cmd_vel = probe.create_publisher(Twist, f"{ns}/cmd_vel", RELIABLE_QOS)
    wait_until(lambda: cmd_vel.get_subscription_count() > 0 and odom.messages, 60, what="the twin's odom and cmd_vel")
    assert odom.messages[-1].header.frame_id == "odom" and odom.messages[-1].child_frame_id == "base_link"

    def pose():
        return odom_pose(odom.messages[-1])

    corners = []
    for goal in ((0.3, 0.0), (0.3, 0.3), (0.0, 0.3), (0.0, 0.0)):  # forward, left, back, right (REP 103)
        go_to(cmd_vel.publish, pose, goal, timeout=60, tol=0.005)
        cmd_vel.publish(twist())
        wait_until(lambda: odom_speed(odom.messages[-1]) < 1e-4, 10, what="the twin at rest")
        corners.append(pose())
    for (x, y, _), goal in zip(corners, ((0.3, 0.0), (0.3, 0.3), (0.0, 0.3), (0.0, 0.0))):
        assert math.dist((x, y), goal) < 0.02, (x, y, goal)  # stopped within 2 cm of each corner (5 mm + the ramp)
    x, y, yaw = corners[-1]
    assert math.hypot(x, y) < 0.02 and abs(yaw) < math.radians(1)  # the square closes
    # robot_state carries the base's measured twist next to the arm (what the lekiwi contract records)
    drive_until(cmd_vel.publish, twist(x=0.1), lambda: odom.messages[-1].twist.twist.linear.x > 0.099, timeout=10)
    wait_until(lambda: state.messages and abs(state.messages[-1].data[6] - 0.1) < 1e-3, 5, what="robot_state's x.vel")
    assert len(state.messages[-1].data) == len(ARM_JOINTS) + 3
    # commands stop: the twin stops within the 0.5 s timeout and the 0.1 s ramp (sim time runs with the wall here)
    last = time.monotonic()
    wait_until(lambda: odom_speed(odom.messages[-1]) < 1e-4, 5, what="the twin stopped")
    stopped_after = time.monotonic() - last
    assert 0.4 < stopped_after < 1.5, stopped_after
    # NaN: refused, the base stops at once
    drive_until(cmd_vel.publish, twist(y=0.15), lambda: odom.messages[-1].twist.twist.linear.y > 0.149, timeout=10)
    cmd_vel.publish(twist(x=math.nan))
    t0 = time.monotonic()
    wait_until(lambda: odom_speed(odom.messages[-1]) < 1e-4, 5, what="the twin stopped after NaN")
    assert time.monotonic() - t0 < 0.45  # well before the 0.5 s timeout: 0.15 s of ramp
    assert bridge.counters["steps"] > 0 and robot.join.refused == 0


def test_two_twin_arms_are_driven_through_bimanual_node_as_the_real_pair(ros, closing):
    ns = "/twin_pair"
    bridge = SimBridgeNode(context=ros.context, namespace=ns, parameter_overrides=bridge_params("bi_so101"))
    closing.append(bridge)
    ros.add_node(bridge)
    pair = BimanualNode(
        context=ros.context,
        namespace=f"{ns}/bimanual",
        parameter_overrides=[
            Parameter("left_namespace", value=f"{ns}/left"),
            Parameter("right_namespace", value=f"{ns}/right"),
        ],
    )
    ros.add_node(pair)
    probe = ros.create_node("twin_pair_probe")
    joined = MessageCollector(probe, JointState, f"{ns}/bimanual/joint_states", SENSOR_QOS)
    left = MessageCollector(probe, JointState, f"{ns}/left/joint_states", SENSOR_QOS)
    commands = probe.create_publisher(Float64MultiArray, f"{ns}/bimanual/commands", RELIABLE_QOS)
    left_cmd = probe.create_publisher(Float64MultiArray, f"{ns}/left/commands", RELIABLE_QOS)
    teleop = {
        s: probe.create_publisher(Float64MultiArray, f"{ns}/bimanual/teleop/{s}", SENSOR_QOS) for s in ("left", "right")
    }
    wait_until(lambda: joined.messages and commands.get_subscription_count() > 0, 60, what="the pair's joint_states")
    assert list(joined.messages[-1].name) == list(PAIR_JOINTS)
    assert list(left.messages[-1].name) == list(ARM_JOINTS)  # each arm as its own robot_node publishes it

    def at(target, tol=0.06) -> bool:
        return bool(np.all(np.abs(np.asarray(joined.messages[-1].position) - target) < tol))

    # the pair's one action vector (a policy node's): each arm goes to its half
    target = np.array([0.3, 0.2, -0.2, 0.3, 0.5, 0.1, -0.3, -0.2, 0.2, -0.3, -0.5, 0.2])
    commands.publish(numpy_to_float64_multi_array(target))
    wait_until(lambda: at(target), 30, what=f"the twin arms at {target}")
    # one arm's own commands (as a robot_node takes them): the other arm holds
    left_cmd.publish(numpy_to_float64_multi_array(np.zeros(6)))
    moved = np.concatenate([np.zeros(6), target[6:]])
    wait_until(lambda: at(moved), 30, what="the left arm back at 0, the right one holding")
    # two leaders' halves (teleop_node's commands_topic): joined by bimanual_node into the pair's commands
    actions = MessageCollector(probe, Float64MultiArray, f"{ns}/bimanual/commands", RELIABLE_QOS)
    leaders = {"left": np.full(6, -0.2), "right": np.full(6, 0.25)}

    def lead() -> bool:
        for side, pub in teleop.items():
            pub.publish(numpy_to_float64_multi_array(leaders[side]))
        return at(np.concatenate([leaders["left"], leaders["right"]]))

    deadline = time.monotonic() + 30
    while not lead():
        assert time.monotonic() < deadline, "the twin arms did not follow the leaders"
        time.sleep(1 / 30)
    assert actions.messages and np.allclose(actions.messages[-1].data, np.concatenate(list(leaders.values())))
