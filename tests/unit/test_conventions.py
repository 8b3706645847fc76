"""One source for QoS numbers and joint names: the live rclpy profiles, the QoS a bag offers on replay and
every module naming SO-101 joints read `lerobot_ros.conventions`."""

from __future__ import annotations

import yaml
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy, qos_profile_sensor_data
from std_msgs.msg import String

from lerobot_ros.bag import write_bag
from lerobot_ros.conventions import PROFILE_NAMES, QOS_SPECS, SO101_JOINTS, joint_names
from lerobot_ros.ros import qos as ros_qos


def test_rclpy_profiles_are_the_table():
    assert qos_profile_sensor_data == ros_qos.SENSOR_QOS  # the table's "sensor" is rclpy's sensor-data profile
    assert ros_qos.RECORDING_QOS.depth == 1000 and ros_qos.RELIABLE_QOS.depth == 10
    for name, profile in ros_qos.PROFILES.items():
        spec = QOS_SPECS[name]
        assert profile.depth == spec.depth
        assert (profile.reliability == ReliabilityPolicy.RELIABLE) == spec.reliable
        assert (profile.durability == DurabilityPolicy.TRANSIENT_LOCAL) == spec.latched
    # the two episode_status profiles, named by purpose: the bridge's (last 10) and an evaluator's (all of them)
    assert (ros_qos.EPISODE_STATUS_QOS.depth, ros_qos.STATUS_FOLLOWER_QOS.depth) == (10, 1000)
    assert (
        ros_qos.EPISODE_STATUS_QOS.durability
        == ros_qos.STATUS_FOLLOWER_QOS.durability
        == DurabilityPolicy.TRANSIENT_LOCAL
    )


def test_a_bag_offers_the_live_profile_of_its_name(tmp_path):
    """bag/writer.py used to write depth 10 for `recording` while the live profile keeps 1000."""
    topics = {name: f"/{name}" for name in PROFILE_NAMES}
    path = write_bag(
        tmp_path / "bag",
        [(t, "std_msgs/msg/String", 1, String(data="x")) for t in topics.values()],
        qos={t: name for name, t in topics.items()},
    )
    meta = yaml.safe_load((path / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    offered = {
        t["topic_metadata"]["name"]: t["topic_metadata"]["offered_qos_profiles"][0]
        for t in meta["topics_with_message_count"]
    }
    for name, topic in topics.items():
        live = ros_qos.qos_by_name(name)
        got = offered[topic]
        assert got["depth"] == live.depth, name
        assert got["reliability"] == (
            "reliable" if live.reliability == ReliabilityPolicy.RELIABLE else "best_effort"
        ), name
        assert got["durability"] == (
            "transient_local" if live.durability == DurabilityPolicy.TRANSIENT_LOCAL else "volatile"
        ), name


def test_joint_names_come_from_one_place():
    from lerobot_ros.hardware.virtual.arms import ARM_PRESETS, MOTOR_NAMES
    from lerobot_ros.nodes import talker
    from lerobot_ros.sim.so101_twin import JOINT_NAMES

    assert JOINT_NAMES is MOTOR_NAMES is talker.SO101_JOINTS is SO101_JOINTS
    assert {r: joint_names(r) for r in ARM_PRESETS} == dict.fromkeys(ARM_PRESETS, SO101_JOINTS)
