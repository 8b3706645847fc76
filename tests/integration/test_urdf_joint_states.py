"""joint_states (0 = mid-range) -> URDF joint values for robot_state_publisher: the SO-101 offsets, pass-through
of foreign joints, and urdf_joint_states_node on real DDS (a JointState in, the converted one out)."""

from __future__ import annotations

import numpy as np
import pytest
from sensor_msgs.msg import JointState

from lerobot_ros.viz import joint_zero_offsets, urdf_joint_state, urdf_positions

SO101_JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]


def joint_state(names, position, velocity=(), effort=(), sec=7, nanosec=250, frame_id="arm") -> JointState:
    msg = JointState(
        name=list(names),
        position=[float(v) for v in position],
        velocity=[float(v) for v in velocity],
        effort=[float(v) for v in effort],
    )
    msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id = sec, nanosec, frame_id
    return msg


def test_so101_offsets_are_the_urdf_mid_ranges(so101):
    offsets = joint_zero_offsets(so101)
    assert list(offsets) == SO101_JOINTS
    # the URDF's zero is the mid-range for four joints, not for wrist_roll and gripper (the jaw drew ~45 deg off)
    assert offsets["wrist_roll"] == pytest.approx((-2.74385 + 2.84121) / 2) and offsets["wrist_roll"] == pytest.approx(
        0.0487, abs=1e-3
    )
    assert offsets["gripper"] == pytest.approx((-0.174533 + 1.74533) / 2) and np.degrees(
        offsets["gripper"]
    ) == pytest.approx(45.0, abs=0.01)
    assert max(abs(offsets[j]) for j in SO101_JOINTS[:4]) < 2e-3
    assert joint_zero_offsets(so101, "urdf") == dict.fromkeys(SO101_JOINTS, 0.0)
    with pytest.raises(ValueError, match="joint_zero must be one of mid_range, urdf, got 'degrees'"):
        joint_zero_offsets(so101, "degrees")


def test_the_same_mid_range_shift_as_the_chunk_markers(so101):
    """The model (robot_state_publisher) and the predicted-chunk markers place the arm at the same URDF values,
    and those match the MuJoCo twin's qpos (ROS value + the MJCF joint's mid-range)."""
    ros = np.array([0.1, -0.4, 0.7, -0.2, 1.3, 0.25])
    converted = urdf_joint_state(joint_state(SO101_JOINTS, ros), joint_zero_offsets(so101))
    markers = urdf_positions(so101, SO101_JOINTS, ros[None, :])
    np.testing.assert_allclose(converted.position, [markers[j][0] for j in SO101_JOINTS], atol=1e-12)
    mujoco = pytest.importorskip("mujoco")
    from lerobot_ros.sim.so101_twin import joint_mid_range, so101_assets_dir

    model = mujoco.MjModel.from_xml_path(str(so101_assets_dir() / "so101_new_calib.xml"))
    np.testing.assert_allclose(converted.position, ros + joint_mid_range(model), atol=1e-4)


def test_conversion_keeps_the_message_and_passes_foreign_joints_through(so101):
    offsets = joint_zero_offsets(so101)
    names = ["gripper", "base_rail", "wrist_roll"]  # another order, and a joint the URDF lacks
    msg = joint_state(names, [0.0, 0.3, -0.5], velocity=[1.0, 2.0, 3.0], effort=[0.1, 0.2, 0.3])
    out = urdf_joint_state(msg, offsets)
    assert (
        out.name == names
        and out.header.frame_id == "arm"
        and (out.header.stamp.sec, out.header.stamp.nanosec) == (7, 250)
    )
    np.testing.assert_allclose(out.position, [offsets["gripper"], 0.3, -0.5 + offsets["wrist_roll"]])
    assert list(out.velocity) == [1.0, 2.0, 3.0] and list(out.effort) == pytest.approx([0.1, 0.2, 0.3])
    assert list(msg.position) == [0.0, 0.3, -0.5]  # the input is not modified
    velocities_only = urdf_joint_state(joint_state(names, [], velocity=[1, 2, 3]), offsets)
    assert list(velocities_only.position) == [] and list(velocities_only.velocity) == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="JointState has 2 positions for 3 names"):
        urdf_joint_state(joint_state(names, [0.0, 1.0]), offsets)


# -- the node on real DDS -----------------------------------------------------------------------------------
def test_node_republishes_joint_states_in_urdf_values(ros, so101, so101_text):
    from std_msgs.msg import String

    from lerobot_ros.nodes.urdf_joint_states_node import UrdfJointStatesNode
    from lerobot_ros.ros.qos import LATCHED_QOS, SENSOR_QOS
    from lerobot_ros.ros.runtime import MessageCollector, wait_until

    probe = ros.create_node("urdf_joint_states_probe")
    description = probe.create_publisher(String, "/robot_description", LATCHED_QOS)
    description.publish(String(data=so101_text))  # latched, as robot_state_publisher publishes it
    states = probe.create_publisher(JointState, "/sim/joint_states", SENSOR_QOS)
    converted = MessageCollector(probe, JointState, "/urdf_joint_states/joint_states", SENSOR_QOS)
    node = ros.add_node(
        UrdfJointStatesNode(context=ros.context, cli_args=["--ros-args", "-r", "joint_states:=/sim/joint_states"])
    )
    wait_until(
        lambda: (
            node.offsets is not None
            and states.get_subscription_count() > 0
            and converted.subscription.get_publisher_count() > 0
        ),
        20,
        what="the node to get the URDF and connect",
    )
    ros_positions = [0.1, -0.4, 0.7, -0.2, 0.0, 0.0]
    msg = joint_state(SO101_JOINTS, ros_positions, velocity=np.arange(6), effort=-np.arange(6), sec=3, nanosec=9)
    # best effort both ways: publish until one arrives (discovery may still be settling on the data path)
    wait_until(
        lambda: states.publish(msg) or len(converted.messages) > 0, 20, interval=0.05, what="a converted JointState"
    )
    out = converted.messages[0]
    assert out.name == SO101_JOINTS and (out.header.stamp.sec, out.header.stamp.nanosec) == (3, 9)
    assert (
        out.header.frame_id == "arm"
        and list(out.velocity) == list(range(6))
        and list(out.effort) == [-v for v in range(6)]
    )
    offsets = joint_zero_offsets(so101)
    np.testing.assert_allclose(out.position, np.array(ros_positions) + [offsets[j] for j in SO101_JOINTS])
    assert out.position[5] == pytest.approx(np.radians(45.0), abs=1e-3)  # gripper at mid-range = 45 deg in the URDF


def test_node_startup_errors_and_pass_through(ros, so101_text):
    from rclpy.parameter import Parameter

    from lerobot_ros.nodes.urdf_joint_states_node import UrdfJointStatesNode
    from lerobot_ros.ros.entry import NodeStartupError

    def make(**params):
        return UrdfJointStatesNode(
            context=ros.context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
        )

    with pytest.raises(NodeStartupError, match="robot_description parameter: the robot_description is not valid XML"):
        make(robot_description="<robot")
    with pytest.raises(
        NodeStartupError, match="robot_description parameter: the robot_description's root element is <model>"
    ):
        make(robot_description="<model/>", joint_zero="urdf")
    with pytest.raises(NodeStartupError, match="parameter 'joint_zero' must be one of mid_range, urdf, got 'deg'"):
        make(joint_zero="deg")
    for params, gripper in (
        ({"robot_description": so101_text}, pytest.approx(np.pi / 4, abs=1e-3)),
        ({"joint_zero": "urdf"}, 0.0),
    ):
        node = make(**params)
        try:  # urdf: a pass-through that needs no URDF
            assert node.offsets is not None and node.offsets.get("gripper", 0.0) == gripper
        finally:
            node.destroy_node()
