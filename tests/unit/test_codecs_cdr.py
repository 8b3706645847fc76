"""codecs.cdr against rclpy's own serializer: the bytes it reads and writes are the messages ROS 2 exchanges."""

from __future__ import annotations

import random

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import CodecError, joint_state_values, numpy_to_float64_multi_array, numpy_to_joint_state
from lerobot_ros.codecs.cdr import (
    Float64MultiArrayCdr,
    JointStateCdr,
    JointStateView,
    UnsupportedEncoding,
    read_joint_state,
)
from lerobot_ros.codecs.joint_state import joint_state_from_cdr


def random_joint_state(rng: random.Random) -> JointState:
    """Names of every length (so every padding case), 0-9 joints, any of the three value fields."""
    n = rng.randint(0, 9)
    names = ["".join(rng.choice("abxyz_0") for _ in range(rng.randint(1, 13))) for _ in range(n)]
    msg = numpy_to_joint_state(
        names,
        position=[rng.uniform(-4, 4) for _ in range(n)],
        stamp_ns=rng.randint(0, 2**31 * 10**9),
        frame_id="base_link"[: rng.randint(0, 9)],
    )
    if rng.random() < 0.5:
        msg.velocity = [rng.uniform(-1, 1) for _ in range(n)]
    if rng.random() < 0.3:
        msg.effort = [rng.uniform(-1, 1) for _ in range(n)]
    return msg


def test_read_joint_state_matches_rclpy_field_for_field():
    rng = random.Random(7)
    for _ in range(200):
        msg = random_joint_state(rng)
        view = read_joint_state(serialize_message(msg))
        assert isinstance(view, JointStateView)
        assert (view.header.stamp.sec, view.header.stamp.nanosec) == (msg.header.stamp.sec, msg.header.stamp.nanosec)
        assert view.header.frame_id == msg.header.frame_id and view.name == list(msg.name)
        assert view.position == list(msg.position) and view.velocity == list(msg.velocity)
        assert view.effort == list(msg.effort)


def test_view_reads_like_the_message_in_the_codecs():
    msg = numpy_to_joint_state(["b", "a"], position=[2.0, 1.0], stamp_ns=5)
    view = joint_state_from_cdr(serialize_message(msg))
    assert joint_state_values(view, ["a", "b"]) == [1.0, 2.0] == joint_state_values(msg, ["a", "b"])


@pytest.mark.parametrize("n", [0, 1, 6, 7])
def test_joint_state_writer_deserializes_to_the_same_message(n):
    names = [f"joint_{'x' * i}" for i in range(n)]  # lengths 6..: every padding before the doubles
    position = [0.5 * i - 1.0 for i in range(n)]
    raw = JointStateCdr(names).encode(position, 1_700_000_000_123_456_789)
    assert deserialize_message(raw, JointState) == numpy_to_joint_state(
        names, position=position, stamp_ns=1_700_000_000_123_456_789
    )
    if n:
        with pytest.raises(CodecError, match=f"has {n} joints, got {n + 1} positions"):
            JointStateCdr(names).encode([*position, 0.0], 0)


@pytest.mark.parametrize("shape", [(0,), (6,), (3, 2)])
def test_float64_multi_array_writer_deserializes_to_the_same_message(shape):
    values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) / 3
    expected = numpy_to_float64_multi_array(values)
    dims = [(d.label, d.size, d.stride) for d in expected.layout.dim]
    raw = Float64MultiArrayCdr(dims, values.size).encode(values.reshape(-1).tolist())
    assert deserialize_message(raw, Float64MultiArray) == expected


def test_malformed_bytes_say_what_is_wrong():
    raw = serialize_message(numpy_to_joint_state(["a", "b"], position=[1.0, 2.0], stamp_ns=1))
    with pytest.raises(CodecError, match=r"malformed JointState \(52 bytes\): a sequence of 2 doubles does not fit"):
        read_joint_state(raw[:52])
    with pytest.raises(CodecError, match=r"malformed JointState \(30 bytes\): it ends inside a length field"):
        read_joint_state(raw[:30])
    with pytest.raises(CodecError, match="ends inside its header stamp"):
        read_joint_state(raw[:10])
    with pytest.raises(CodecError, match="shorter than its encapsulation header"):
        read_joint_state(b"\x00")


def test_other_cdr_flavours_go_through_rclpy():
    msg = numpy_to_joint_state(["a", "bc"], stamp_ns=3_000_000_005)  # no doubles: the same body in XCDR1 and XCDR2
    xcdr2 = b"\x00\x07" + serialize_message(msg)[2:]
    with pytest.raises(UnsupportedEncoding, match="encapsulation 0007 is not plain CDR"):
        read_joint_state(xcdr2)
    decoded = joint_state_from_cdr(xcdr2)
    assert isinstance(decoded, JointState) and decoded == msg


def test_names_are_decoded_again_when_their_bytes_differ():
    """The reader remembers a stream's names by their bytes: same names reuse the list, any other bytes
    (other names, other padding garbage) are decoded, never mistaken for the remembered ones."""
    first = read_joint_state(serialize_message(numpy_to_joint_state(["ab", "c"], position=[1.0, 2.0])))
    again = read_joint_state(serialize_message(numpy_to_joint_state(["ab", "c"], position=[3.0, 4.0])))
    assert again.name is first.name and again.position == [3.0, 4.0]
    raw = bytearray(serialize_message(numpy_to_joint_state(["ab", "c"], position=[5.0, 6.0])))
    raw[raw.index(b"ab\x00") + 3] = 0x7F  # the padding after "ab\0", as a reused sender buffer leaves it
    odd = read_joint_state(bytes(raw))
    assert odd.name == ["ab", "c"] and odd.position == [5.0, 6.0]
    other = read_joint_state(serialize_message(numpy_to_joint_state(["ab", "d"], position=[7.0, 8.0])))
    assert other.name == ["ab", "d"] and other.position == [7.0, 8.0]


def test_a_contract_feature_reads_its_joint_state_from_bytes_as_from_the_message():
    """Feature.read: the policy node's raw subscription gives the same LeRobot value and stamp as the message."""
    from lerobot_ros.contract import ContractError, load_contract

    features = load_contract("so101").features
    state = features["observation.state"]
    action = load_contract("so101").action_feature
    assert state.reads_raw and features["observation.images.front"].reads_raw and not action.reads_raw
    joints = state.joints or []
    msg = numpy_to_joint_state(list(reversed(joints)), position=[0.1 * i for i in range(6)], stamp_ns=7_000_000_123)
    view = state.read(serialize_message(msg))
    assert isinstance(view, JointStateView)
    assert state.decode(view).tolist() == state.decode(msg).tolist()
    assert state.stamp_ns(view, 0) == state.stamp_ns(msg, 0) == 7_000_000_123
    assert state.read(msg) is msg  # a message object passes as it came
    with pytest.raises(ContractError, match="is not read from serialized bytes"):
        action.read(b"\x00\x01\x00\x00")


def test_header_stamp_in_either_byte_order():
    import struct

    from lerobot_ros.codecs.cdr import header_stamp_ns

    little = serialize_message(numpy_to_joint_state(["a"], position=[1.0], stamp_ns=5_000_000_007))
    big = b"\x00\x00\x00\x00" + struct.pack(">iI", 5, 7)  # CDR_BE: the same stamp
    assert header_stamp_ns(little) == header_stamp_ns(big) == 5_000_000_007


# (encoding, dtype, channels): colour, mono, 16-bit, Bayer, YUV and generic float layouts
IMAGE_LAYOUTS = [
    ("rgb8", "uint8", 3),
    ("bgr8", "uint8", 3),
    ("mono8", "uint8", 1),
    ("mono16", "uint16", 1),
    ("rgba16", "uint16", 4),
    ("bayer_rggb8", "uint8", 1),
    ("yuv422", "uint8", 2),
    ("32FC1", "float32", 1),
]


def random_image(rng: random.Random, encoding: str, dtype: str, channels: int):
    """An Image of odd sizes, sometimes with padded rows, a frame_id of any length (every padding before the
    fields that follow it), either byte order for multi-byte pixels."""
    from lerobot_ros.codecs import numpy_to_image

    h, w = rng.randint(1, 9), 2 * rng.randint(1, 6)  # even widths: YUV 4:2:2 pairs pixels
    np_rng = np.random.default_rng(rng.randint(0, 2**31))
    pixels = (np_rng.random((h, w, channels)) * 200).astype(dtype)
    msg = numpy_to_image(
        pixels, encoding, stamp_ns=rng.randint(0, 2**31 * 10**9), frame_id="camera"[: rng.randint(0, 6)]
    )
    row = w * channels * np.dtype(dtype).itemsize
    if rng.random() < 0.4:  # padded rows, as some drivers send them
        pad = rng.randint(1, 7)
        padded = np.zeros((h, row + pad), np.uint8)
        padded[:, :row] = np.frombuffer(bytes(msg.data), np.uint8).reshape(h, row)
        msg.step, msg.data = row + pad, padded.tobytes()
    if np.dtype(dtype).itemsize > 1 and rng.random() < 0.5:
        big = pixels.astype(np.dtype(dtype).newbyteorder(">"))
        msg.is_bigendian, msg.step, msg.data = 1, row, big.tobytes()
    return msg


@pytest.mark.parametrize(("encoding", "dtype", "channels"), IMAGE_LAYOUTS)
def test_read_image_matches_rclpy_field_for_field_and_pixel_for_pixel(encoding, dtype, channels):
    from lerobot_ros.codecs import image_to_numpy
    from lerobot_ros.codecs.cdr import ImageView, read_image

    rng = random.Random(encoding)
    for _ in range(40):
        msg = random_image(rng, encoding, dtype, channels)
        raw = serialize_message(msg)
        view = read_image(raw)
        assert isinstance(view, ImageView)
        assert (view.header.stamp.sec, view.header.stamp.nanosec) == (msg.header.stamp.sec, msg.header.stamp.nanosec)
        assert (view.header.frame_id, view.height, view.width, view.encoding) == (
            msg.header.frame_id,
            msg.height,
            msg.width,
            msg.encoding,
        )
        assert (view.is_bigendian, view.step, bytes(view.data)) == (msg.is_bigendian, msg.step, bytes(msg.data))
        np.testing.assert_array_equal(image_to_numpy(view), image_to_numpy(msg))


def test_an_image_view_shares_the_serialized_bytes_read_only():
    from lerobot_ros.codecs import image_to_numpy, numpy_to_image
    from lerobot_ros.codecs.cdr import read_image

    raw = serialize_message(numpy_to_image(np.full((4, 6, 3), 9, np.uint8), "rgb8"))
    view = read_image(raw)
    assert view.data.obj is raw and view.data.readonly and view.data.nbytes == 4 * 6 * 3
    pixels = image_to_numpy(view)
    assert np.shares_memory(pixels, np.frombuffer(raw, np.uint8)) and not pixels.flags.writeable


def test_a_malformed_image_says_what_is_wrong():
    from lerobot_ros.codecs import numpy_to_image
    from lerobot_ros.codecs.cdr import read_image

    raw = serialize_message(numpy_to_image(np.zeros((2, 3, 3), np.uint8), "rgb8"))  # 18 bytes of pixels at the end
    with pytest.raises(CodecError, match=r"malformed Image \(\d+ bytes\): 18 bytes of data do not fit in the 17 left"):
        read_image(raw[:-1])
    with pytest.raises(CodecError, match=r"malformed Image \(10 bytes\): it ends inside its header stamp"):
        read_image(raw[:10])
    with pytest.raises(CodecError, match="ends inside a length field"):
        read_image(raw[:14])


def test_an_image_in_another_cdr_flavour_goes_through_rclpy():
    from sensor_msgs.msg import Image

    from lerobot_ros.codecs import image_from_cdr, numpy_to_image

    msg = numpy_to_image(np.arange(12, dtype=np.uint8).reshape(2, 2, 3), "rgb8", stamp_ns=3)
    xcdr2 = b"\x00\x07" + serialize_message(msg)[2:]
    decoded = image_from_cdr(xcdr2)
    assert isinstance(decoded, Image) and decoded == msg


def test_a_contract_feature_reads_its_image_from_bytes_as_from_the_message():
    """The policy node's raw image subscription: the same LeRobot image and stamp as the message gives, in memory
    of its own (the resampler keeps frames; policies may write into what they get)."""
    from lerobot_ros.codecs import numpy_to_image
    from lerobot_ros.codecs.cdr import ImageView
    from lerobot_ros.contract import load_contract

    front = load_contract("so101_sim").features["observation.images.front"]
    assert front.msg_type == "sensor_msgs/msg/Image"
    h, w = front.shape[:2]
    pixels = np.random.default_rng(3).integers(0, 255, (h, w, 3), dtype=np.uint8)
    for encoding, sent in (("rgb8", pixels), ("bgr8", pixels[..., ::-1])):
        msg = numpy_to_image(np.ascontiguousarray(sent), encoding, stamp_ns=9_000_000_001)
        raw = serialize_message(msg)
        assert isinstance(front.read(raw), ImageView)  # the bytes were read in place, not deserialized by rclpy
        value = front.decode(front.read(raw))
        np.testing.assert_array_equal(value, front.decode(msg))
        np.testing.assert_array_equal(value, pixels)
        assert value.flags.owndata and value.flags.writeable
        assert not np.shares_memory(value, np.frombuffer(raw, np.uint8))
        assert front.stamp_ns(front.read(raw), 0) == 9_000_000_001
    small = serialize_message(numpy_to_image(np.full((h // 2, w // 2, 3), 7, np.uint8), "rgb8"))
    resized = front.decode(front.read(small))  # the twin's contract resizes what it reads to its shape
    assert resized.shape == (h, w, 3) and int(resized.min()) == int(resized.max()) == 7
    with pytest.raises(CodecError, match="malformed Image"):
        front.read(small[:-1])


def test_read_compressed_image_matches_rclpy_and_decodes_the_same():
    from lerobot_ros.codecs import compressed_from_cdr, compressed_to_numpy, numpy_to_compressed
    from lerobot_ros.codecs.cdr import CompressedImageView, read_compressed_image

    rng = np.random.default_rng(5)
    for fmt, frame_id in (("jpeg", ""), ("png", "cam"), ("jpeg", "wrist_cam")):
        msg = numpy_to_compressed(
            rng.integers(0, 255, (24, 32, 3), dtype=np.uint8), "rgb8", fmt, stamp_ns=11, frame_id=frame_id
        )
        raw = serialize_message(msg)
        view = compressed_from_cdr(raw)
        assert isinstance(view, CompressedImageView) and view.data.obj is raw and view.data.readonly
        assert (view.header.frame_id, view.format, bytes(view.data)) == (
            msg.header.frame_id,
            msg.format,
            bytes(msg.data),
        )
        np.testing.assert_array_equal(compressed_to_numpy(view), compressed_to_numpy(msg))
    with pytest.raises(CodecError, match=r"malformed CompressedImage \(\d+ bytes\): \d+ bytes of data do not fit"):
        read_compressed_image(raw[:-1])
    xcdr2 = b"\x00\x07" + raw[2:]
    assert compressed_from_cdr(xcdr2) == msg


def test_a_contract_feature_reads_its_compressed_image_from_bytes_as_from_the_message():
    from lerobot_ros.codecs import numpy_to_compressed
    from lerobot_ros.codecs.cdr import CompressedImageView
    from lerobot_ros.contract import load_contract

    front = load_contract("so101").features["observation.images.front"]
    assert front.msg_type == "sensor_msgs/msg/CompressedImage" and front.reads_raw
    h, w = front.shape[:2]
    pixels = np.random.default_rng(4).integers(0, 255, (h, w, 3), dtype=np.uint8)
    msg = numpy_to_compressed(pixels, "rgb8", "png", stamp_ns=8_000_000_002)  # lossless: the pixels come back
    raw = serialize_message(msg)
    assert isinstance(front.read(raw), CompressedImageView)
    value = front.decode(front.read(raw))
    np.testing.assert_array_equal(value, pixels)
    assert front.stamp_ns(front.read(raw), 0) == 8_000_000_002


def _be_string(text: str, length: int) -> bytes:
    """A big-endian CDR string at offset `length` from the body's start, with the padding before it."""
    import struct

    data = text.encode() + b"\x00"
    return b"\xaa" * (-length % 4) + struct.pack(">I", len(data)) + data


def test_big_endian_image_and_compressed_image_bytes_read_the_same():
    """serialize_message writes little-endian only: a big-endian (CDR_BE) sender's bytes, built here, with padding
    bytes that are not zero (Fast CDR leaves them as its buffer held them)."""
    import struct

    from lerobot_ros.codecs import image_to_numpy
    from lerobot_ros.codecs.cdr import read_compressed_image, read_image

    pixels = np.arange(2 * 3, dtype=np.uint16).reshape(2, 3) * 1000
    for frame_id in ("", "c", "cam", "wrist"):
        body = struct.pack(">iI", -3, 7)
        body += _be_string(frame_id, len(body))
        body += b"\xaa" * (-len(body) % 4) + struct.pack(">II", 2, 3)
        body += _be_string("mono16", len(body))
        body += b"\x01"
        body += b"\xaa" * (-len(body) % 4) + struct.pack(">II", 6, pixels.nbytes) + pixels.astype(">u2").tobytes()
        view = read_image(b"\x00\x00\x00\x00" + body)
        assert (view.header.stamp.sec, view.header.stamp.nanosec, view.header.frame_id) == (-3, 7, frame_id)
        assert (view.height, view.width, view.encoding, view.is_bigendian, view.step) == (2, 3, "mono16", 1, 6)
        np.testing.assert_array_equal(image_to_numpy(view), pixels)
        body = struct.pack(">iI", 4, 5)
        body += _be_string(frame_id, len(body))
        body += _be_string("png", len(body))
        body += b"\xaa" * (-len(body) % 4) + struct.pack(">I", 3) + b"xyz"
        compressed = read_compressed_image(b"\x00\x00\x00\x00" + body)
        assert (compressed.header.frame_id, compressed.format, bytes(compressed.data)) == (frame_id, "png", b"xyz")
