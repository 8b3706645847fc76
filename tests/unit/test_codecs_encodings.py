"""Every encoding a ROS camera driver publishes, decoded with cv_bridge's rules (checked against pictures built
here from first principles, not against the OpenCV calls the codec makes): Bayer mosaics of each pattern, packed
YUV 4:2:2 in both byte orders, 16-bit colour and mono scaled to 8 bits, and the generic data encodings read
raw and refused as pictures."""

from __future__ import annotations

import numpy as np
import pytest

from lerobot_ros.codecs import CodecError, image_to_numpy, image_to_rgb, numpy_to_image

# four flat colour blocks: a demosaic reproduces a flat colour exactly away from the block borders
BLOCK_COLOURS = np.array([[200, 30, 60], [10, 220, 40], [50, 70, 250], [180, 180, 20]], np.uint8)


def _blocks(size: int = 16) -> np.ndarray:
    top = np.hstack([np.broadcast_to(BLOCK_COLOURS[i], (size, size, 3)) for i in (0, 1)])
    bottom = np.hstack([np.broadcast_to(BLOCK_COLOURS[i], (size, size, 3)) for i in (2, 3)])
    return np.ascontiguousarray(np.vstack([top, bottom]))


def _mosaic(rgb: np.ndarray, pattern: str) -> np.ndarray:
    """The one-channel Bayer image a sensor with `pattern` (its first two rows, e.g. rggb = R G / G B) takes."""
    channel = {"r": 0, "g": 1, "b": 2}
    out = np.zeros(rgb.shape[:2], rgb.dtype)
    for k, colour in enumerate(pattern):
        dy, dx = divmod(k, 2)
        out[dy::2, dx::2] = rgb[dy::2, dx::2, channel[colour]]
    return out


def _interior(img: np.ndarray, size: int = 16, margin: int = 3) -> list[np.ndarray]:
    return [
        img[y + margin : y + size - margin, x + margin : x + size - margin]
        for y, x in ((0, 0), (0, size), (size, 0), (size, size))
    ]


@pytest.mark.parametrize("pattern", ["rggb", "bggr", "gbrg", "grbg"])
@pytest.mark.parametrize("bits", [8, 16])
def test_bayer_mosaics_demosaic_to_their_colours(pattern, bits):
    rgb = _blocks()
    mosaic = _mosaic(rgb, pattern) if bits == 8 else _mosaic(rgb.astype(np.uint16) * 257, pattern)
    out = image_to_rgb(numpy_to_image(mosaic, f"bayer_{pattern}{bits}"))
    assert out.shape == rgb.shape and out.dtype == np.uint8
    for region, colour in zip(_interior(out), BLOCK_COLOURS, strict=True):
        assert np.array_equal(region, np.broadcast_to(colour, region.shape)), (pattern, region[0, 0], colour)


def _yuv_bt601(y: int, u: int, v: int) -> np.ndarray:
    """RGB of one YUV sample, limited-range BT.601 (what cv_bridge's OpenCV conversion of yuv422 uses)."""
    c, d, e = y - 16, u - 128, v - 128
    rgb = [1.164 * c + 1.596 * e, 1.164 * c - 0.392 * d - 0.813 * e, 1.164 * c + 2.017 * d]
    return np.clip(np.round(rgb), 0, 255)


@pytest.mark.parametrize(("encoding", "order"), [("yuv422", "UYVY"), ("yuv422_yuy2", "YUYV")])
def test_packed_yuv422_in_both_byte_orders(encoding, order):
    h, w = 4, 8
    y, u, v = np.full((h, w), 128, np.uint8), 64, 200
    y[:, w // 2 :] = 60  # the right half darker: luma per pixel, chroma per pair
    packed = np.empty((h, w, 2), np.uint8)
    chroma = np.empty((h, w), np.uint8)
    chroma[:, 0::2], chroma[:, 1::2] = u, v
    if order == "UYVY":
        packed[..., 0], packed[..., 1] = chroma, y
    else:
        packed[..., 0], packed[..., 1] = y, chroma
    msg = numpy_to_image(packed, encoding)
    assert image_to_numpy(msg).shape == (h, w, 2)  # raw: two bytes per pixel, as cv_bridge's passthrough
    out = image_to_rgb(msg)
    assert out.shape == (h, w, 3)
    assert np.abs(out[0, 0].astype(int) - _yuv_bt601(128, u, v)).max() <= 3, out[0, 0]
    assert np.abs(out[0, -1].astype(int) - _yuv_bt601(60, u, v)).max() <= 3, out[0, -1]


def test_sixteen_bit_colour_and_mono_scale_to_eight_bits():
    values = np.array([0, 257, 32896, 65535, 1000], np.uint16)  # -> 0, 1, 128, 255, round(1000 / 257) = 4
    expected = np.array([0, 1, 128, 255, 4], np.uint8)
    rgb16 = np.stack([values, values[::-1], values], axis=-1)[None]
    rgb8 = np.stack([expected, expected[::-1], expected], axis=-1)[None]
    assert np.array_equal(image_to_rgb(numpy_to_image(rgb16, "rgb16")), rgb8)
    assert np.array_equal(image_to_rgb(numpy_to_image(rgb16[..., ::-1].copy(), "bgr16")), rgb8)
    rgba16 = np.concatenate([rgb16, np.full((1, 5, 1), 65535, np.uint16)], axis=-1)
    assert np.array_equal(image_to_rgb(numpy_to_image(rgba16, "rgba16")), rgb8)
    mono = image_to_rgb(numpy_to_image(values[None], "mono16"))
    assert np.array_equal(mono, np.repeat(expected[None, :, None], 3, axis=2))
    big = numpy_to_image(rgb16, "rgb16")
    big.data = rgb16.astype(">u2").tobytes()
    big.is_bigendian = 1
    assert np.array_equal(image_to_rgb(big), rgb8)


@pytest.mark.parametrize(
    ("encoding", "dtype", "channels"),
    [
        ("8SC1", np.int8, 1),
        ("16SC1", np.int16, 1),
        ("32SC1", np.int32, 1),
        ("64FC1", np.float64, 1),
        ("16UC3", np.uint16, 3),
        ("32FC3", np.float32, 3),
        ("8UC4", np.uint8, 4),
        ("32FC1", np.float32, 1),
    ],
)
def test_generic_encodings_read_raw_and_are_not_pictures(encoding, dtype, channels):
    rng = np.random.default_rng(1)
    shape = (3, 5) if channels == 1 else (3, 5, channels)
    values = (rng.standard_normal(shape) * 100).astype(dtype)
    msg = numpy_to_image(values, encoding)
    back = image_to_numpy(msg)
    assert back.dtype == dtype and back.shape == shape and np.array_equal(back, values)
    with pytest.raises(CodecError, match=rf"cannot turn a '{encoding}' image into RGB \(cv_bridge refuses it too\)"):
        image_to_rgb(msg)


def test_8uc1_and_8uc3_stay_mono_and_rgb():
    """cv_bridge refuses these as pictures; drivers that use them mean mono8 / rgb8, and the codec reads them so."""
    rgb = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    assert np.array_equal(image_to_rgb(numpy_to_image(rgb, "8UC3")), rgb)
    mono = image_to_rgb(numpy_to_image(rgb[..., 0].copy(), "8UC1"))
    assert np.array_equal(mono, np.repeat(rgb[..., :1], 3, axis=2))
