"""Codec speed: a 640x480 rgb8 frame to and from sensor_msgs/Image, against numpy.copy of the same frame.

Goal: no per-pixel Python. Figure: (encode + decode-with-copy) time / numpy.copy time, measured
in the same process; a per-pixel Python path would be thousands of times slower than a copy, a
memcpy-based one a small multiple (encode is one memcpy plus building the message).
Also reported: decode as a zero-copy view, bgr8 -> rgb, serialization through rclpy, jpeg both ways.
Usage: python bench/codecs.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Image

from lerobot_ros.codecs import (
    compressed_to_numpy,
    image_to_numpy,
    image_to_rgb,
    numpy_to_compressed,
    numpy_to_image,
)

GOAL_RATIO = 8.0


def per_call_ms(fn, repeat: int) -> float:
    """Median of `repeat` timed calls, in milliseconds (after one warm-up call)."""
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(samples))


def camera_like_frame(h: int = 480, w: int = 640) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    rng = np.random.default_rng(0)
    frame = np.stack([x * 255 // w, y * 255 // h, (x ^ y) & 255], axis=-1).astype(np.int16)
    frame += rng.integers(-8, 8, size=frame.shape, dtype=np.int16)
    return np.clip(frame, 0, 255).astype(np.uint8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    frame = camera_like_frame()
    msg = numpy_to_image(frame, "rgb8")
    bgr_msg = numpy_to_image(frame[..., ::-1].copy(), "bgr8")
    raw = serialize_message(msg)
    jpeg = numpy_to_compressed(frame, "rgb8", "jpeg", quality=90)

    rows = {
        "numpy.copy (reference)": per_call_ms(lambda: np.copy(frame), args.repeat),
        "numpy -> Image": per_call_ms(lambda: numpy_to_image(frame, "rgb8"), args.repeat),
        "Image -> numpy (copy)": per_call_ms(lambda: image_to_numpy(msg, copy=True), args.repeat),
        "Image -> numpy (view)": per_call_ms(lambda: image_to_numpy(msg), args.repeat),
        "bgr8 Image -> rgb (view)": per_call_ms(lambda: image_to_rgb(bgr_msg), args.repeat),
        "rclpy serialize Image": per_call_ms(lambda: serialize_message(msg), args.repeat),
        "rclpy deserialize Image": per_call_ms(lambda: deserialize_message(raw, Image), args.repeat),
        "numpy -> jpeg CompressedImage": per_call_ms(lambda: numpy_to_compressed(frame), max(20, args.repeat // 10)),
        "jpeg CompressedImage -> numpy": per_call_ms(lambda: compressed_to_numpy(jpeg), max(20, args.repeat // 10)),
    }
    ref = rows["numpy.copy (reference)"]
    ratio = (rows["numpy -> Image"] + rows["Image -> numpy (copy)"]) / ref

    print(f"640x480 rgb8 frame ({frame.nbytes / 1e6:.2f} MB), median of {args.repeat} calls")
    print(f"{'operation':34s} {'ms/frame':>9s} {'x numpy.copy':>13s}")
    for name, ms in rows.items():
        print(f"{name:34s} {ms:9.3f} {ms / ref:13.2f}")
    print(f"encode + decode (copy) = {ratio:.2f} x numpy.copy (goal <= {GOAL_RATIO})")
    result = {
        "bench": "codecs",
        "figure": round(ratio, 3),
        "goal": GOAL_RATIO,
        "goal_op": "<=",
        "meets_goal": bool(ratio <= GOAL_RATIO),
        "ms_per_frame": {k: round(v, 4) for k, v in rows.items()},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
