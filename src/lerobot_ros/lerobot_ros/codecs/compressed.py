"""sensor_msgs/CompressedImage (jpeg/png, image_transport's `compressed` format) <-> numpy RGB.

The `format` field follows image_transport: "rgb8; jpeg compressed bgr8". OpenCV works in BGR: decoding
to RGB happens inside libjpeg-turbo's colour conversion (IMREAD_COLOR_RGB, one pass and one allocation,
the array the caller keeps); encoding converts RGB -> BGR once, in C. Measured in bench/compressed.py.
"""

from __future__ import annotations

import array

import cv2
import numpy as np
from sensor_msgs.msg import CompressedImage

from lerobot_ros.codecs.cdr import CompressedImageView, read_compressed_image, read_or_deserialize
from lerobot_ros.codecs.errors import CodecError
from lerobot_ros.codecs.image import image_to_numpy, image_to_rgb
from lerobot_ros.codecs.time import ns_to_time

_EXTENSIONS = {"jpeg": ".jpg", "jpg": ".jpg", "png": ".png"}


def decode_flags(cv) -> dict[str, tuple[int, int | None]]:
    """Target encoding -> (imdecode flags, colour conversion after it or None); a mono source comes out as 3 equal
    channels for rgb8/bgr8. OpenCV >= 4.10 decodes straight to RGB; an older one (apt's python3-opencv on Ubuntu
    24.04 is 4.6) decodes to BGR and converts."""
    rgb = getattr(cv, "IMREAD_COLOR_RGB", None)
    return {
        "rgb8": (rgb, None) if rgb is not None else (cv.IMREAD_COLOR, cv.COLOR_BGR2RGB),
        "bgr8": (getattr(cv, "IMREAD_COLOR_BGR", cv.IMREAD_COLOR), None),
        "mono8": (cv.IMREAD_GRAYSCALE, None),
    }


_DECODE_FLAGS = decode_flags(cv2)


def compressed_to_numpy(msg, encoding: str = "rgb8") -> np.ndarray:
    """Decode a CompressedImage into (H, W, 3) uint8 `rgb8` or `bgr8`, or (H, W) `mono8`."""
    raw = np.frombuffer(msg.data, dtype=np.uint8)
    if raw.size == 0:
        raise CodecError("compressed image has no data")
    flags = _DECODE_FLAGS.get(encoding)
    if flags is None:
        raise CodecError(f"cannot decode a compressed image to {encoding!r}; use rgb8, bgr8 or mono8")
    try:
        pixels = cv2.imdecode(raw, flags[0])
    except cv2.error:
        pixels = None
    if pixels is None:
        raise CodecError(f"compressed image (format {msg.format!r}, {raw.size} bytes) could not be decoded")
    return pixels if flags[1] is None else cv2.cvtColor(pixels, flags[1])


def compressed_from_cdr(raw) -> CompressedImageView | CompressedImage:
    """The CompressedImage of a `raw=True` subscription's bytes, its data viewed in place (codecs.cdr); another
    CDR flavour goes through rclpy's deserializer. CodecError when the bytes are malformed."""
    return read_or_deserialize(raw, read_compressed_image, CompressedImage)


def numpy_to_compressed(
    pixels: np.ndarray,
    encoding: str = "rgb8",
    fmt: str = "jpeg",
    quality: int = 90,
    stamp_ns: int | None = None,
    frame_id: str = "",
) -> CompressedImage:
    """Compress (H, W, 3) rgb8/bgr8 or (H, W) mono8 pixels into a CompressedImage (jpeg or png)."""
    ext = _EXTENSIONS.get(fmt)
    if ext is None:
        raise CodecError(f"unsupported compression {fmt!r}; use jpeg or png")
    pixels = np.ascontiguousarray(pixels)  # OpenCV takes no negative strides (e.g. a bgr8 -> rgb8 view)
    if pixels.dtype != np.uint8:
        raise CodecError(f"compressed images need uint8 pixels, got {pixels.dtype}")
    if encoding == "rgb8":
        bgr = cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR)
    elif encoding in ("bgr8", "mono8"):
        bgr = pixels
    else:
        raise CodecError(f"cannot compress a {encoding!r} image; use rgb8, bgr8 or mono8")
    params = [cv2.IMWRITE_JPEG_QUALITY, int(quality)] if ext == ".jpg" else [cv2.IMWRITE_PNG_COMPRESSION, 1]
    ok, buf = cv2.imencode(ext, bgr, params)
    if not ok:
        raise CodecError(f"OpenCV could not encode a {pixels.shape} image as {fmt}")
    msg = CompressedImage()
    if stamp_ns is not None:
        msg.header.stamp = ns_to_time(stamp_ns)
    msg.header.frame_id = frame_id
    stored = "mono8" if encoding == "mono8" else "bgr8"
    msg.format = f"{encoding}; {'jpeg' if ext == '.jpg' else 'png'} compressed {stored}"
    data = array.array("B")
    data.frombytes(buf.reshape(-1))
    msg.data = data
    return msg


def image_to_compressed(msg, fmt: str = "jpeg", quality: int = 90) -> CompressedImage:
    """An Image message compressed as image_transport's `compressed` publisher does: header kept (capture
    stamp, frame_id); rgb8/bgr8/mono8 encoded as they are, other 8-bit colour encodings as rgb8."""
    if msg.encoding in ("rgb8", "bgr8", "mono8"):
        pixels, encoding = image_to_numpy(msg), msg.encoding
    else:
        pixels, encoding = image_to_rgb(msg), "rgb8"
    out = numpy_to_compressed(pixels, encoding, fmt, quality, frame_id=msg.header.frame_id)
    out.header.stamp = msg.header.stamp
    return out
