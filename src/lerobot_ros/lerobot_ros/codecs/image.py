"""sensor_msgs/Image <-> numpy arrays (HxWxC or HxW), honouring `step` row padding and endianness."""

from __future__ import annotations

import array
import sys

import numpy as np
from sensor_msgs.msg import Image

from lerobot_ros.codecs.errors import CodecError
from lerobot_ros.codecs.time import ns_to_time

# encoding -> (numpy dtype, channels)
IMAGE_ENCODINGS: dict[str, tuple[np.dtype, int]] = {
    "rgb8": (np.dtype(np.uint8), 3),
    "bgr8": (np.dtype(np.uint8), 3),
    "rgba8": (np.dtype(np.uint8), 4),
    "bgra8": (np.dtype(np.uint8), 4),
    "mono8": (np.dtype(np.uint8), 1),
    "8UC1": (np.dtype(np.uint8), 1),
    "8UC3": (np.dtype(np.uint8), 3),
    "mono16": (np.dtype(np.uint16), 1),
    "16UC1": (np.dtype(np.uint16), 1),
    "32FC1": (np.dtype(np.float32), 1),
}


def _layout(encoding: str) -> tuple[np.dtype, int]:
    try:
        return IMAGE_ENCODINGS[encoding]
    except KeyError:
        raise CodecError(
            f"unsupported image encoding {encoding!r}; supported: {', '.join(sorted(IMAGE_ENCODINGS))}"
        ) from None


def image_to_numpy(msg, copy: bool = False) -> np.ndarray:
    """The pixels of an Image as (H, W, C) for colour encodings or (H, W) for single-channel ones.

    Without `copy` the result is a view of the message buffer whenever rows are unpadded (no memcpy).
    """
    dtype, channels = _layout(msg.encoding)
    height, width, step = int(msg.height), int(msg.width), int(msg.step)
    row_bytes = width * channels * dtype.itemsize
    if step < row_bytes:
        raise CodecError(f"image step {step} is smaller than one row ({width} px x {channels} ch x {dtype.itemsize} B)")
    buf = np.frombuffer(msg.data, dtype=np.uint8)
    if buf.size < step * height:
        raise CodecError(f"image data has {buf.size} bytes, expected {step * height} (height {height} x step {step})")
    rows = buf[: step * height].reshape(height, step)[:, :row_bytes]
    if not rows.flags.c_contiguous:  # padded rows: one copy to drop the padding
        rows = np.ascontiguousarray(rows)
        copy = False
    big_endian = bool(msg.is_bigendian) and dtype.itemsize > 1
    pixels = rows.view(dtype.newbyteorder(">") if big_endian else dtype)
    pixels = pixels.reshape(height, width, channels) if channels > 1 else pixels.reshape(height, width)
    if big_endian:
        pixels, copy = pixels.astype(dtype), False
    return pixels.copy() if copy else pixels


def image_to_rgb(msg) -> np.ndarray:
    """An (H, W, 3) uint8 RGB array from any 8-bit colour or mono Image (the LeRobot camera layout)."""
    pixels = image_to_numpy(msg)
    enc = msg.encoding
    if enc in ("rgb8", "8UC3"):
        return pixels
    if enc == "bgr8":
        return pixels[..., ::-1]
    if enc == "rgba8":
        return pixels[..., :3]
    if enc == "bgra8":
        return pixels[..., 2::-1]
    if enc in ("mono8", "8UC1"):
        return np.repeat(pixels[..., None], 3, axis=2)
    raise CodecError(f"cannot turn a {enc!r} image into RGB; use an 8-bit colour or mono8 image")


def numpy_to_image(
    pixels: np.ndarray, encoding: str = "rgb8", stamp_ns: int | None = None, frame_id: str = ""
) -> Image:
    """An Image message from (H, W[, C]) pixels; `encoding` must match the dtype and channel count."""
    dtype, channels = _layout(encoding)
    pixels = np.asarray(pixels)
    if pixels.ndim == 2:
        pixels = pixels[..., None]
    if pixels.ndim != 3 or pixels.shape[2] != channels:
        raise CodecError(f"encoding {encoding!r} needs {channels} channel(s), got an array of shape {pixels.shape}")
    if pixels.dtype != dtype:
        raise CodecError(f"encoding {encoding!r} needs dtype {dtype}, got {pixels.dtype}")
    height, width = pixels.shape[:2]
    msg = Image()
    if stamp_ns is not None:
        msg.header.stamp = ns_to_time(stamp_ns)
    msg.header.frame_id = frame_id
    msg.height, msg.width, msg.encoding = height, width, encoding
    msg.is_bigendian = int(sys.byteorder == "big")
    msg.step = width * channels * dtype.itemsize
    data = array.array("B")
    data.frombytes(np.ascontiguousarray(pixels).reshape(-1).view(np.uint8))  # one memcpy, little-endian host
    msg.data = data
    return msg
