"""codecs.cdr against rclpy's own serializer: the bytes it reads and writes are the messages ROS 2 exchanges."""

from __future__ import annotations

import random

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
    import numpy as np

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
    assert state.reads_raw and not features["observation.images.front"].reads_raw
    joints = state.joints or []
    msg = numpy_to_joint_state(list(reversed(joints)), position=[0.1 * i for i in range(6)], stamp_ns=7_000_000_123)
    view = state.read(serialize_message(msg))
    assert isinstance(view, JointStateView)
    assert state.decode(view).tolist() == state.decode(msg).tolist()
    assert state.stamp_ns(view, 0) == state.stamp_ns(msg, 0) == 7_000_000_123
    assert state.read(msg) is msg  # a message object passes as it came
    with pytest.raises(ContractError, match="is not read from serialized bytes"):
        features["observation.images.front"].read(b"\x00\x01\x00\x00")


def test_header_stamp_in_either_byte_order():
    import struct

    from lerobot_ros.codecs.cdr import header_stamp_ns

    little = serialize_message(numpy_to_joint_state(["a"], position=[1.0], stamp_ns=5_000_000_007))
    big = b"\x00\x00\x00\x00" + struct.pack(">iI", 5, 7)  # CDR_BE: the same stamp
    assert header_stamp_ns(little) == header_stamp_ns(big) == 5_000_000_007
