"""The per-tick messages of a controller as CDR bytes, read and written without rclpy's Python message objects.

Why: right after a policy's inference (caches full of image tensors) rclpy's conversion of a JointState into its
Python message (Header, Time, a list of names, array.array fields, each through generated setters) cost ~0.2 ms
on this 2-core machine, and building + converting the action message another ~0.05 ms (hot: 9 and 4 us). A
subscription with `raw=True` hands over the serialized bytes and `Publisher.publish(bytes)` sends them as they
are, so the tick path reads six names and six doubles with `struct` and writes a constant prefix plus six
doubles. An Image read from its bytes views its pixels where they lie in the serialized message: rclpy's
deserialization copies a 640x480 rgb8 frame twice (CDR -> C message -> Python array) and builds the message
object, ~180-210 us per frame here against ~40 for the bytes alone; a CompressedImage's encoded bytes likewise.

Scope: plain (XCDR1) CDR, little- or big-endian, as rmw_fastrtps and rmw_cyclonedds write ROS 2 messages. Any
other encapsulation (XCDR2) raises `UnsupportedEncoding`, and callers fall back to rclpy's deserializer. Offsets
align to the field's size, counted from the end of the 4-byte encapsulation header.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lerobot_ros.codecs.errors import CodecError
from lerobot_ros.codecs.time import NS_PER_S, split_ns

_ENCAPSULATION = {b"\x00\x01": "<", b"\x00\x00": ">"}  # CDR_LE, CDR_BE (XCDR1)
_LE_HEADER = b"\x00\x01\x00\x00"  # what the writers below produce: little-endian plain CDR
_ORIGIN = 4  # alignment counts from the end of the encapsulation header
_STAMPS = {"<": struct.Struct("<iI"), ">": struct.Struct(">iI")}


def header_stamp(raw) -> tuple[int, int]:
    """(sec, nanosec) of a CDR-serialized message whose first field is std_msgs/Header, without deserializing
    (bit 0 of the encapsulation id is the byte order, in every CDR flavour)."""
    return _STAMPS["<" if raw[1] & 1 else ">"].unpack_from(raw, _ORIGIN)


def header_stamp_ns(raw) -> int:
    """`header_stamp` in nanoseconds."""
    sec, nanosec = header_stamp(raw)
    return sec * NS_PER_S + nanosec


class UnsupportedEncoding(CodecError):
    """Bytes in a CDR flavour this module does not read (XCDR2...): use rclpy's deserializer instead."""


@dataclass(slots=True)
class Stamp:
    sec: int = 0
    nanosec: int = 0


@dataclass(slots=True)
class Header:
    stamp: Stamp = field(default_factory=Stamp)
    frame_id: str = ""


@dataclass(slots=True)
class JointStateView:
    """A sensor_msgs/JointState read from CDR: the attributes the codecs read (duck-typed like the message)."""

    header: Header
    name: list[str]
    position: list[float]
    velocity: list[float]
    effort: list[float]


@dataclass(slots=True)
class ImageView:
    """A sensor_msgs/Image read from CDR: the message's attributes, `data` a read-only memoryview of the pixels
    inside the serialized bytes (no copy; it keeps those bytes alive)."""

    header: Header
    height: int
    width: int
    encoding: str
    is_bigendian: int
    step: int
    data: memoryview


@dataclass(slots=True)
class CompressedImageView:
    """A sensor_msgs/CompressedImage read from CDR, `data` a read-only memoryview of the encoded bytes in place."""

    header: Header
    format: str
    data: memoryview


class _Reader:
    __slots__ = ("raw", "pos", "end", "order", "u32")

    def __init__(self, raw):
        if len(raw) < _ORIGIN:
            raise CodecError(f"CDR message of {len(raw)} bytes: shorter than its encapsulation header")
        order = _ENCAPSULATION.get(bytes(raw[:2]))
        if order is None:
            raise UnsupportedEncoding(f"CDR encapsulation {bytes(raw[:2]).hex()} is not plain CDR (00 00 / 00 01)")
        self.raw, self.pos, self.end, self.order = raw, _ORIGIN, len(raw), order
        self.u32 = _U32[order]

    def _align(self, size: int) -> None:
        self.pos += -(self.pos - _ORIGIN) % size

    def header(self) -> Header:
        """A std_msgs/Header: the stamp (first, right after the encapsulation) and the frame id."""
        if self.pos + 8 > self.end:
            raise CodecError("it ends inside its header stamp")
        sec, nanosec = header_stamp(self.raw)
        self.pos += 8
        return Header(Stamp(sec, nanosec), self.string())

    def count(self) -> int:
        self._align(4)
        if self.pos + 4 > self.end:
            raise CodecError("it ends inside a length field")
        (n,) = self.u32.unpack_from(self.raw, self.pos)
        self.pos += 4
        return n

    def string(self) -> str:
        n = self.count()
        if n == 0 or self.pos + n > self.end:
            raise CodecError(f"a string of {n} bytes does not fit")
        text = bytes(self.raw[self.pos : self.pos + n - 1]).decode()
        self.pos += n
        return text

    def octets(self) -> memoryview:
        """A uint8 sequence as a read-only view of the bytes it lies in (no copy)."""
        n = self.count()
        if self.pos + n > self.end:
            raise CodecError(f"{n} bytes of data do not fit in the {self.end - self.pos} left")
        view = memoryview(self.raw)[self.pos : self.pos + n].toreadonly()
        self.pos += n
        return view

    def doubles(self) -> list[float]:
        n = self.count()
        if not n:
            return []
        self._align(8)
        if self.pos + 8 * n > self.end:
            raise CodecError(f"a sequence of {n} doubles does not fit")
        values = list(_doubles(self.order, n).unpack_from(self.raw, self.pos))
        self.pos += 8 * n
        return values


_U32 = {order: struct.Struct(order + "I") for order in _ENCAPSULATION.values()}
_DOUBLES: dict[tuple[str, int], struct.Struct] = {}


def _doubles(order: str, n: int) -> struct.Struct:
    s = _DOUBLES.get((order, n))
    if s is None:
        s = _DOUBLES[(order, n)] = struct.Struct(f"{order}{n}d")
    return s


_NAMES_SEEN: list[tuple[int, bytes, list[str]]] = []  # (start, the names' bytes, the names): a stream's names repeat


def _names(r: _Reader) -> list[str]:
    """The name sequence at the reader's position: the list of an earlier message with the same bytes there (one
    bytes comparison instead of decoding each name), else decoded and remembered (a few layouts at most). The
    padding between names is whatever the sender's buffer held (Fast CDR does not zero it): the same for a
    stream of one shape, so a stream hits; any difference only costs a decode, never a wrong name."""
    r._align(4)
    start, raw = r.pos, r.raw
    for seen_start, seen, names in _NAMES_SEEN:
        if seen_start == start and raw[start : start + len(seen)] == seen:
            r.pos = start + len(seen)
            return names
    names = [r.string() for _ in range(r.count())]
    _NAMES_SEEN.insert(0, (start, bytes(raw[start : r.pos]), names))
    del _NAMES_SEEN[8:]
    return names


def read_joint_state(raw) -> JointStateView:
    """A JointState from its CDR bytes (a `raw=True` subscription's message). CodecError if they are malformed;
    UnsupportedEncoding (a CodecError) for a CDR flavour other than plain CDR. Messages with the same joint names
    share one `name` list: read it, do not change it."""
    r = _Reader(raw)
    try:
        header = r.header()
        names = _names(r)
        position, velocity, effort = r.doubles(), r.doubles(), r.doubles()
    except (CodecError, UnicodeDecodeError) as exc:
        raise CodecError(f"malformed JointState ({len(raw)} bytes): {exc}") from None
    return JointStateView(header, names, position, velocity, effort)


def read_image(raw) -> ImageView:
    """An Image from its CDR bytes (a `raw=True` subscription's message), its pixels a view of `raw`. CodecError if
    the bytes are malformed; UnsupportedEncoding (a CodecError) for a CDR flavour other than plain CDR."""
    r = _Reader(raw)
    try:
        header = r.header()
        height, width = r.count(), r.count()
        encoding = r.string()
        if r.pos + 1 > r.end:
            raise CodecError("it ends before is_bigendian")
        is_bigendian = raw[r.pos]
        r.pos += 1
        step = r.count()
        data = r.octets()
    except (CodecError, UnicodeDecodeError) as exc:
        raise CodecError(f"malformed Image ({len(raw)} bytes): {exc}") from None
    return ImageView(header, height, width, encoding, is_bigendian, step, data)


def read_compressed_image(raw) -> CompressedImageView:
    """A CompressedImage from its CDR bytes, its data a view of `raw`; errors as `read_image`."""
    r = _Reader(raw)
    try:
        header = r.header()
        fmt = r.string()
        data = r.octets()
    except (CodecError, UnicodeDecodeError) as exc:
        raise CodecError(f"malformed CompressedImage ({len(raw)} bytes): {exc}") from None
    return CompressedImageView(header, fmt, data)


def read_or_deserialize(raw, read: Callable[[bytes], Any], message_class: type) -> Any:
    """`read(raw)` (a reader above: no message object); bytes in another CDR flavour (XCDR2) are deserialized by
    rclpy into `message_class` instead. What a `raw=True` subscription's callback calls."""
    try:
        return read(raw)
    except UnsupportedEncoding:
        from rclpy.serialization import deserialize_message

        return deserialize_message(raw, message_class)


class _Writer:
    """Builds the constant part of a little-endian message: appends fields with CDR alignment."""

    def __init__(self):
        self.buf = bytearray(_LE_HEADER)

    def _align(self, size: int) -> None:
        self.buf += b"\x00" * (-(len(self.buf) - _ORIGIN) % size)

    def u32(self, value: int) -> None:
        self._align(4)
        self.buf += _U32["<"].pack(value)

    def string(self, text: str) -> None:
        data = text.encode() + b"\x00"
        self.u32(len(data))
        self.buf += data


class Float64MultiArrayCdr:
    """std_msgs/Float64MultiArray bytes for one fixed layout: `encode(values)` = constant prefix + the doubles."""

    def __init__(self, dims: Sequence[tuple[str, int, int]], size: int, data_offset: int = 0):
        w = _Writer()
        w.u32(len(dims))
        for label, dim_size, stride in dims:
            w.string(label)
            w.u32(dim_size)
            w.u32(stride)
        w.u32(data_offset)
        w.u32(size)
        if size:  # CDR pads only before an element
            w._align(8)
        self.size, self._prefix, self._values = size, bytes(w.buf), _doubles("<", size)

    def encode(self, values: Sequence[float]) -> bytes:
        if len(values) != self.size:
            raise CodecError(f"this Float64MultiArray layout holds {self.size} values, got {len(values)}")
        return self._prefix + self._values.pack(*values)


class JointStateCdr:
    """sensor_msgs/JointState bytes for fixed names, positions only: `encode(position, stamp_ns)`."""

    def __init__(self, names: Sequence[str], frame_id: str = ""):
        w = _Writer()
        w.buf += b"\x00" * 8  # the stamp, filled per message
        w.string(frame_id)
        w.u32(len(names))
        for name in names:
            w.string(name)
        w.u32(len(names))
        if names:  # CDR pads only before an element
            w._align(8)
        self.size = len(names)
        self._head, self._names = bytes(w.buf[:_ORIGIN]), bytes(w.buf[_ORIGIN + 8 :])
        self._values = _doubles("<", self.size)
        self._tail = b"\x00" * 8  # empty velocity and effort (their counts, already 4-aligned after the doubles)

    def encode(self, position: Sequence[float], stamp_ns: int) -> bytes:
        if len(position) != self.size:
            raise CodecError(f"this JointState has {self.size} joints, got {len(position)} positions")
        stamp = _STAMPS["<"].pack(*split_ns(stamp_ns))
        return self._head + stamp + self._names + self._values.pack(*position) + self._tail
