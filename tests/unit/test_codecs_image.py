import numpy as np
import pytest
from sensor_msgs.msg import Image

from lerobot_ros.codecs import CodecError, image_to_numpy, image_to_rgb, numpy_to_image

RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    "encoding,shape,dtype",
    [
        ("rgb8", (48, 64, 3), np.uint8),
        ("bgr8", (48, 64, 3), np.uint8),
        ("rgba8", (48, 64, 4), np.uint8),
        ("mono8", (48, 64), np.uint8),
        ("16UC1", (48, 64), np.uint16),
        ("32FC1", (48, 64), np.float32),
    ],
)
def test_round_trip_is_exact(encoding, shape, dtype):
    if np.issubdtype(dtype, np.floating):
        pixels = RNG.standard_normal(shape).astype(dtype)
    else:
        pixels = RNG.integers(0, np.iinfo(dtype).max, size=shape, dtype=dtype)
    msg = numpy_to_image(pixels, encoding, stamp_ns=1_500_000_123, frame_id="cam_optical_frame")
    assert (msg.height, msg.width, msg.encoding) == (shape[0], shape[1], encoding)
    assert msg.step == shape[1] * (shape[2] if len(shape) == 3 else 1) * np.dtype(dtype).itemsize
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (1, 500_000_123)
    assert msg.header.frame_id == "cam_optical_frame"
    back = image_to_numpy(msg)
    assert back.dtype == dtype and back.shape == shape
    np.testing.assert_array_equal(back, pixels)


def test_padded_rows_are_skipped():
    pixels = RNG.integers(0, 255, size=(5, 7, 3), dtype=np.uint8)
    msg = Image(height=5, width=7, encoding="rgb8", step=7 * 3 + 11)
    padded = np.zeros((5, msg.step), dtype=np.uint8)
    padded[:, : 7 * 3] = pixels.reshape(5, -1)
    padded[:, 7 * 3 :] = 99  # garbage in the padding must not leak into the pixels
    msg.data = padded.tobytes()
    np.testing.assert_array_equal(image_to_numpy(msg), pixels)


def test_big_endian_16bit_is_converted():
    depth = np.array([[1, 258], [65535, 4096]], dtype=np.uint16)
    msg = Image(height=2, width=2, encoding="16UC1", step=4, is_bigendian=1)
    msg.data = depth.astype(">u2").tobytes()
    np.testing.assert_array_equal(image_to_numpy(msg), depth)


def test_bgr_and_mono_become_rgb():
    rgb = RNG.integers(0, 255, size=(4, 6, 3), dtype=np.uint8)
    np.testing.assert_array_equal(image_to_rgb(numpy_to_image(rgb[..., ::-1].copy(), "bgr8")), rgb)
    mono = RNG.integers(0, 255, size=(4, 6), dtype=np.uint8)
    out = image_to_rgb(numpy_to_image(mono, "mono8"))
    assert out.shape == (4, 6, 3)
    for c in range(3):
        np.testing.assert_array_equal(out[..., c], mono)


def test_decoding_is_a_view_unless_copy_is_asked():
    msg = numpy_to_image(np.zeros((2, 2, 3), np.uint8))
    buffer = np.frombuffer(msg.data, np.uint8)
    assert np.shares_memory(image_to_numpy(msg), buffer)
    assert not np.shares_memory(image_to_numpy(msg, copy=True), buffer)


def test_unsupported_encoding_is_named():
    msg = Image(height=1, width=1, encoding="nv21", step=1, data=b"\x00")
    with pytest.raises(CodecError, match="unsupported image encoding 'nv21'; supported: .*bayer_rggb8.*C<1-4>"):
        image_to_numpy(msg)


def test_short_data_is_reported():
    msg = Image(height=4, width=4, encoding="rgb8", step=12, data=bytes(40))
    with pytest.raises(CodecError, match="has 40 bytes, expected 48"):
        image_to_numpy(msg)


def test_step_smaller_than_row_is_reported():
    msg = Image(height=1, width=4, encoding="rgb8", step=6, data=bytes(12))
    with pytest.raises(CodecError, match="step 6 is smaller than one row"):
        image_to_numpy(msg)


def test_encoder_checks_channels_and_dtype():
    with pytest.raises(CodecError, match="needs 3 channel"):
        numpy_to_image(np.zeros((2, 2), np.uint8), "rgb8")
    with pytest.raises(CodecError, match="needs dtype uint16"):
        numpy_to_image(np.zeros((2, 2), np.uint8), "16UC1")
