"""CompressedImage, CameraInfo, JointState, Float64MultiArray, JointTrajectory and time codecs."""

import numpy as np
import pytest
from builtin_interfaces.msg import Duration, Time
from sensor_msgs.msg import CompressedImage, JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

from lerobot_ros.codecs import (
    CodecError,
    camera_info_to_dict,
    chunk_to_joint_trajectory,
    compressed_to_numpy,
    duration_to_ns,
    float64_multi_array_to_numpy,
    joint_state_to_numpy,
    joint_trajectory_to_chunk,
    make_camera_info,
    ns_to_duration,
    ns_to_time,
    numpy_to_compressed,
    numpy_to_float64_multi_array,
    numpy_to_joint_state,
    seconds_to_ns,
    time_to_ns,
)


def smooth_image(h=120, w=160):
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([x * 255 // w, y * 255 // h, (x + y) * 255 // (w + h)], axis=-1).astype(np.uint8)


def test_jpeg_round_trip_within_tolerance_and_colour_order():
    rgb = smooth_image()
    msg = numpy_to_compressed(rgb, "rgb8", "jpeg", quality=95, stamp_ns=42, frame_id="f")
    assert msg.format == "rgb8; jpeg compressed bgr8"
    assert time_to_ns(msg.header.stamp) == 42
    back = compressed_to_numpy(msg, "rgb8")
    assert back.shape == rgb.shape
    assert np.abs(back.astype(int) - rgb.astype(int)).mean() < 2.0
    # red stays red: channel order is preserved through OpenCV's BGR
    red = np.zeros((16, 16, 3), np.uint8)
    red[..., 0] = 255
    out = compressed_to_numpy(numpy_to_compressed(red, "rgb8", "jpeg"), "rgb8")
    assert out[..., 0].mean() > 240 and out[..., 2].mean() < 15


def test_png_is_lossless_and_bgr_output():
    rgb = smooth_image(31, 17)
    msg = numpy_to_compressed(rgb, "rgb8", "png")
    np.testing.assert_array_equal(compressed_to_numpy(msg, "rgb8"), rgb)
    np.testing.assert_array_equal(compressed_to_numpy(msg, "bgr8"), rgb[..., ::-1])


def test_compressed_errors():
    with pytest.raises(CodecError, match="no data"):
        compressed_to_numpy(CompressedImage(format="jpeg"))
    with pytest.raises(CodecError, match="could not be decoded"):
        compressed_to_numpy(CompressedImage(format="jpeg", data=b"not a jpeg at all"))
    with pytest.raises(CodecError, match="unsupported compression 'webp'"):
        numpy_to_compressed(smooth_image(), fmt="webp")


def test_camera_info_pinhole():
    msg = make_camera_info(640, 480, frame_id="front_optical_frame", hfov_deg=90.0, stamp_ns=7)
    d = camera_info_to_dict(msg)
    assert (d["width"], d["height"], d["frame_id"]) == (640, 480, "front_optical_frame")
    assert d["k"][0, 0] == pytest.approx(320.0)  # tan(45 deg) = 1
    assert d["k"][0, 2] == pytest.approx(319.5) and d["k"][1, 2] == pytest.approx(239.5)
    np.testing.assert_allclose(d["p"][:, :3], d["k"])
    assert d["distortion_model"] == "plumb_bob" and d["d"].shape == (5,)
    with pytest.raises(ValueError, match="must be positive"):
        make_camera_info(0, 480)


def test_joint_state_by_name_in_requested_order():
    msg = numpy_to_joint_state(["a", "b", "c"], position=[1.0, 2.0, 3.0], velocity=[0.1, 0.2, 0.3], stamp_ns=5)
    np.testing.assert_array_equal(joint_state_to_numpy(msg, ["c", "a"]), [3.0, 1.0])
    np.testing.assert_array_equal(joint_state_to_numpy(msg, ["b"], "velocity"), [0.2])
    assert time_to_ns(msg.header.stamp) == 5


def test_joint_state_errors_name_the_problem():
    msg = numpy_to_joint_state(["a", "b"], position=[1.0, 2.0])
    with pytest.raises(CodecError, match=r"lacks joint\(s\) \['gripper'\]; it has \['a', 'b'\]"):
        joint_state_to_numpy(msg, ["a", "gripper"])
    with pytest.raises(CodecError, match="2 names but 0 velocity values"):
        joint_state_to_numpy(msg, ["a"], "velocity")
    with pytest.raises(CodecError, match="3 values for 2 joints"):
        numpy_to_joint_state(["a", "b"], position=[1, 2, 3])
    with pytest.raises(CodecError, match="no field 'torque'"):
        joint_state_to_numpy(JointState(), [], "torque")


def test_float64_multi_array_round_trip_with_layout():
    values = np.arange(12, dtype=np.float64).reshape(3, 4)
    msg = numpy_to_float64_multi_array(values, ["time", "joint"])
    assert [d.size for d in msg.layout.dim] == [3, 4] and [d.stride for d in msg.layout.dim] == [12, 4]
    np.testing.assert_array_equal(float64_multi_array_to_numpy(msg), values)


def test_float64_multi_array_plain_and_offset():
    msg = Float64MultiArray(data=[9.0, 1.0, 2.0])
    np.testing.assert_array_equal(float64_multi_array_to_numpy(msg), [9.0, 1.0, 2.0])
    msg.layout.data_offset = 1
    msg.layout.dim.append(MultiArrayDimension(label="x", size=2, stride=2))
    np.testing.assert_array_equal(float64_multi_array_to_numpy(msg, expected_size=2), [1.0, 2.0])
    with pytest.raises(CodecError, match="expected 6 values, got 2"):
        float64_multi_array_to_numpy(msg, expected_size=6)


def test_trajectory_chunk_round_trip():
    names = ["j1", "j2"]
    chunk = np.array([[0.0, 1.0], [0.5, 1.5], [1.0, 2.0]])
    msg = chunk_to_joint_trajectory(names, chunk, fps=30.0, stamp_ns=10**9)
    assert [duration_to_ns(p.time_from_start) for p in msg.points] == [33_333_333, 66_666_667, 100_000_000]
    times, positions = joint_trajectory_to_chunk(msg, ["j2", "j1"])
    np.testing.assert_array_equal(positions, chunk[:, ::-1])
    np.testing.assert_array_equal(times, [33_333_333, 66_666_667, 100_000_000])
    msg0 = chunk_to_joint_trajectory(names, chunk, fps=10.0, start_offset_s=0.0)
    assert duration_to_ns(msg0.points[0].time_from_start) == 0


def test_trajectory_errors():
    with pytest.raises(CodecError, match="does not match 3 joint names"):
        chunk_to_joint_trajectory(["a", "b", "c"], np.zeros((2, 2)), fps=10)
    msg = chunk_to_joint_trajectory(["a"], np.zeros((2, 1)), fps=10)
    msg.points[1].time_from_start = msg.points[0].time_from_start
    with pytest.raises(CodecError, match="strictly increasing"):
        joint_trajectory_to_chunk(msg)
    with pytest.raises(CodecError, match=r"lacks joint\(s\) \['b'\]"):
        joint_trajectory_to_chunk(msg, ["b"])


def test_time_conversions():
    assert time_to_ns(Time(sec=3, nanosec=7)) == 3_000_000_007
    t = ns_to_time(3_000_000_007)
    assert (t.sec, t.nanosec) == (3, 7)
    d = ns_to_duration(-1)
    assert (d.sec, d.nanosec) == (-1, 999_999_999) and duration_to_ns(d) == -1
    assert duration_to_ns(Duration(sec=2, nanosec=5)) == 2_000_000_005
    assert seconds_to_ns(0.1) == 100_000_000
    with pytest.raises(ValueError, match="cannot be negative"):
        ns_to_time(-5)
