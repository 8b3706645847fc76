"""The teleoperator and camera plugins' conversions, without DDS: a leader's message -> the contract's action in
LeRobot units, an image message -> the camera's frame; their configs' checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lerobot_ros.codecs import numpy_to_compressed, numpy_to_image, numpy_to_joint_state
from lerobot_ros.plugins.topics import TopicError

JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
GRIPPER_HALF_RANGE = 0.9599310885968813  # the so101 contract's gripper map: -r..r rad -> 0..100


@pytest.fixture
def teleop(tmp_path):
    from lerobot_ros.plugins.teleop import RosContractTeleop, RosContractTeleopConfig

    return RosContractTeleop(RosContractTeleopConfig(contract="so101", id="unit", calibration_dir=tmp_path))


def test_teleop_reads_joints_by_name_in_the_contracts_units(teleop):
    radians = np.array([0.1, -0.2, 0.3, -0.4, 0.5, 0.0])
    order = [5, 3, 0, 4, 1, 2]  # shuffled, plus a joint the action does not use
    msg = numpy_to_joint_state([JOINTS[i] for i in order] + ["extra"], position=np.r_[radians[order], 9.0])
    action = teleop.action_from(msg)
    assert list(action) == [f"{j}.pos" for j in JOINTS] == list(teleop.action_features)
    assert all(type(v) is float for v in action.values())
    assert np.allclose([action[f"{j}.pos"] for j in JOINTS[:5]], np.degrees(radians[:5]), atol=1e-4)
    assert action["gripper.pos"] == pytest.approx(50.0, abs=1e-4)  # 0 rad is the middle of the gripper's range
    msg = numpy_to_joint_state(JOINTS, position=np.r_[np.zeros(5), GRIPPER_HALF_RANGE])
    assert teleop.action_from(msg)["gripper.pos"] == pytest.approx(100.0, abs=1e-3)


def test_teleop_refuses_a_missing_joint_and_nan_by_topic(teleop):
    with pytest.raises(TopicError, match=r"^/leader/joint_states: JointState lacks joint\(s\) \['gripper'\]"):
        teleop.action_from(numpy_to_joint_state(JOINTS[:5], position=np.zeros(5)))
    with pytest.raises(TopicError, match=r"^/leader/joint_states: non-finite values for elbow_flex.pos"):
        teleop.action_from(numpy_to_joint_state(JOINTS, position=[0, 0, math.nan, 0, 0, 0]))


def test_teleop_takes_a_command_stream_in_the_action_topics_layout(tmp_path):
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.plugins.teleop import RosContractTeleop, RosContractTeleopConfig

    teleop = RosContractTeleop(
        RosContractTeleopConfig(
            contract="so101",
            id="unit",
            calibration_dir=tmp_path,
            topic="/teleop/commands",
            msg_type="std_msgs/msg/Float64MultiArray",
        )
    )
    action = teleop.action_from(Float64MultiArray(data=[0.5, 0.0, 0.0, 0.0, 0.0, -GRIPPER_HALF_RANGE]))
    assert action["shoulder_pan.pos"] == pytest.approx(math.degrees(0.5), abs=1e-4)
    assert action["gripper.pos"] == pytest.approx(0.0, abs=1e-3)
    with pytest.raises(TopicError, match=r"^/teleop/commands: message has 3 values, the contract selects index 5$"):
        teleop.action_from(Float64MultiArray(data=[0.0, 0.0, 0.0]))


def test_teleop_config_names_the_types_it_reads():
    from lerobot_ros.plugins.teleop import RosContractTeleopConfig

    with pytest.raises(ValueError, match="msg_type must be one of sensor_msgs/msg/JointState"):
        RosContractTeleopConfig(msg_type="geometry_msgs/msg/Twist")


def _camera(tmp_path, **kwargs):
    from lerobot_ros.plugins.camera import RosImageCamera, RosImageCameraConfig

    return RosImageCamera(RosImageCameraConfig(**kwargs))


def test_camera_frames_are_resized_to_the_declared_size_and_ordered_as_asked(tmp_path):
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
    same = _camera(tmp_path, topic="/front/image_raw", width=64, height=48)
    frame = same.frame_from(numpy_to_image(rgb[..., ::-1].copy(), "bgr8"))  # a bgr8 driver: still RGB out
    assert frame.dtype == np.uint8 and frame.flags.c_contiguous and np.array_equal(frame, rgb)
    half = _camera(tmp_path, topic="/front/image_raw", width=32, height=24, color_mode="bgr")
    small = half.frame_from(numpy_to_image(rgb, "rgb8"))
    assert small.shape == (24, 32, 3)
    assert np.allclose(small[..., ::-1].astype(float), rgb.reshape(24, 2, 32, 2, 3).mean(axis=(1, 3)), atol=1)


def test_camera_reads_compressed_topics_by_their_name(tmp_path):
    rgb = np.zeros((48, 64, 3), np.uint8)
    rgb[:, :32] = (200, 30, 30)
    camera = _camera(tmp_path, topic="/front/image_raw/compressed", width=64, height=48)
    assert camera.config.msg_type == "sensor_msgs/msg/CompressedImage"
    frame = camera.frame_from(numpy_to_compressed(rgb, "rgb8", "png"))
    assert np.array_equal(frame, rgb)
    assert _camera(tmp_path, topic="/front/image_raw").config.msg_type == "sensor_msgs/msg/Image"


def test_camera_refuses_an_image_it_cannot_decode_by_topic(tmp_path):
    camera = _camera(tmp_path, topic="/front/image_raw")
    msg = numpy_to_image(np.zeros((4, 4, 3), np.uint8), "rgb8")
    msg.encoding = "no_such_encoding"
    with pytest.raises(TopicError, match=r"^/front/image_raw: .*no_such_encoding"):
        camera.frame_from(msg)


def test_camera_config_checks():
    from lerobot_ros.plugins.camera import RosImageCameraConfig

    with pytest.raises(ValueError, match="needs `topic`"):
        RosImageCameraConfig(topic="")
    with pytest.raises(ValueError, match="color_mode"):
        RosImageCameraConfig(topic="/a/image_raw", color_mode="hsv")
