"""sensor_msgs/Image <-> numpy arrays (HxWxC or HxW), honouring `step` row padding and endianness.

Every encoding of ROS's `sensor_msgs/image_encodings.hpp` except the planar NV formats: named colour and mono
ones (8 and 16 bit), Bayer mosaics (8 and 16 bit), packed YUV 4:2:2 (`yuv422` = UYVY, `yuv422_yuy2` = YUYV)
and the generic `<depth>C<n>` ones (`8U` `8S` `16U` `16S` `32S` `32F` `64F`, 1-4 channels). `image_to_numpy`
reads any of them as they are (what cv_bridge's passthrough gives); `image_to_rgb` turns a picture into the
LeRobot camera layout with cv_bridge's conversion rules, through OpenCV (no per-pixel Python).
"""

from __future__ import annotations

import array
import re
import sys

import cv2
import numpy as np
from sensor_msgs.msg import Image

from lerobot_ros.codecs.cdr import ImageView, read_image, read_or_deserialize
from lerobot_ros.codecs.errors import CodecError
from lerobot_ros.codecs.time import ns_to_time

_U8, _U16 = np.dtype(np.uint8), np.dtype(np.uint16)
_BAYER = ("rggb", "bggr", "gbrg", "grbg")

# named encoding -> (numpy dtype, channels); the generic <depth>C<n> ones are parsed by `_layout`
IMAGE_ENCODINGS: dict[str, tuple[np.dtype, int]] = {
    **{f"{name}8": (_U8, n) for name, n in (("rgb", 3), ("bgr", 3), ("rgba", 4), ("bgra", 4), ("mono", 1))},
    **{f"{name}16": (_U16, n) for name, n in (("rgb", 3), ("bgr", 3), ("rgba", 4), ("bgra", 4), ("mono", 1))},
    **{f"bayer_{p}8": (_U8, 1) for p in _BAYER},
    **{f"bayer_{p}16": (_U16, 1) for p in _BAYER},
    "yuv422": (_U8, 2),  # UYVY: U0 Y0 V0 Y1, two bytes per pixel
    "yuv422_yuy2": (_U8, 2),  # YUYV: Y0 U0 Y1 V0
}
_GENERIC = re.compile(r"(8U|8S|16U|16S|32S|32F|64F)C([1-4])")
_GENERIC_DTYPES = {
    "8U": np.uint8,
    "8S": np.int8,
    "16U": np.uint16,
    "16S": np.int16,
    "32S": np.int32,
    "32F": np.float32,
    "64F": np.float64,
}

# ROS names a Bayer mosaic by its first row, OpenCV by the second row's first two pixels (as cv_bridge maps them)
_BAYER_TO_RGB = {
    "rggb": cv2.COLOR_BayerBG2RGB,
    "bggr": cv2.COLOR_BayerRG2RGB,
    "gbrg": cv2.COLOR_BayerGR2RGB,
    "grbg": cv2.COLOR_BayerGB2RGB,
}
_YUV_TO_RGB = {"yuv422": cv2.COLOR_YUV2RGB_UYVY, "yuv422_yuy2": cv2.COLOR_YUV2RGB_YUY2}


def _layout(encoding: str) -> tuple[np.dtype, int]:
    named = IMAGE_ENCODINGS.get(encoding)
    if named is not None:
        return named
    generic = _GENERIC.fullmatch(encoding)
    if generic is not None:
        return np.dtype(_GENERIC_DTYPES[generic.group(1)]), int(generic.group(2))
    raise CodecError(
        f"unsupported image encoding {encoding!r}; supported: {', '.join(sorted(IMAGE_ENCODINGS))} and "
        "<8U|8S|16U|16S|32S|32F|64F>C<1-4>"
    )


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


def _to_8bit(pixels: np.ndarray) -> np.ndarray:
    """16-bit -> 8-bit as cv_bridge scales it (x 255/65535, rounded)."""
    if pixels.dtype == _U8:
        return pixels
    return np.rint(pixels.astype(np.float32) * np.float32(255.0 / 65535.0)).astype(np.uint8)


def image_to_rgb(msg) -> np.ndarray:
    """An (H, W, 3) uint8 RGB array (the LeRobot camera layout) from a colour, mono, Bayer or YUV 4:2:2 Image,
    converted as cv_bridge's `toCvCopy(msg, "rgb8")` does: Bayer mosaics demosaiced, YUV converted, 16-bit
    values scaled by 255/65535. The generic `8UC1` / `8UC3` are read as mono8 / rgb8 (cv_bridge refuses them,
    but drivers that use them mean that); other generic encodings (depth, signed, float) are not pictures."""
    enc = msg.encoding
    pixels = image_to_numpy(msg)
    base = enc[:-2] if enc.endswith("16") else enc[:-1] if enc.endswith("8") else enc
    if enc in ("rgb8", "rgb16", "8UC3"):
        return _to_8bit(pixels)
    if enc in ("bgr8", "bgr16"):
        return _to_8bit(pixels[..., ::-1])
    if enc in ("rgba8", "rgba16"):
        return _to_8bit(pixels[..., :3])
    if enc in ("bgra8", "bgra16"):
        return _to_8bit(pixels[..., 2::-1])
    if enc in ("mono8", "mono16", "8UC1"):
        return np.repeat(_to_8bit(pixels)[..., None], 3, axis=2)
    if base.startswith("bayer_"):
        return _to_8bit(cv2.cvtColor(pixels, _BAYER_TO_RGB[base.removeprefix("bayer_")]))
    if enc in _YUV_TO_RGB:
        return cv2.cvtColor(np.ascontiguousarray(pixels), _YUV_TO_RGB[enc])
    raise CodecError(
        f"cannot turn a {enc!r} image into RGB (cv_bridge refuses it too): it is not a colour, mono, Bayer or YUV "
        "picture (a depth or data image); read it with image_to_numpy"
    )


def image_from_cdr(raw) -> ImageView | Image:
    """The Image of a `raw=True` subscription's bytes: codecs.cdr reads plain CDR and views the pixels in place
    (no message object, no copy); another CDR flavour goes through rclpy's deserializer. CodecError when the bytes
    are malformed. Either reads the same in `image_to_numpy` / `image_to_rgb`."""
    return read_or_deserialize(raw, read_image, Image)


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
