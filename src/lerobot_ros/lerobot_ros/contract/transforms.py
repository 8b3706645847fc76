"""Unit transforms between ROS values and LeRobot values, each with its exact inverse.

Numeric transforms act on a feature's vector, optionally only on some of its elements
(`only: [gripper]`, by joint/value name or index). Image transforms (crop, resize) act on decoded
(H, W, 3) pixels and have no inverse: exported images keep the dataset's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from lerobot_ros.contract.errors import ContractError


@dataclass(frozen=True)
class Affine:
    """y = x * scale + offset on the selected elements (rad2deg, deg2rad, scale, offset, linear)."""

    op: str
    scale: float
    offset: float
    mask: np.ndarray | None = field(default=None, compare=False)  # bool per element, None = all

    def forward(self, x: np.ndarray) -> np.ndarray:
        if self.mask is None:
            return x * self.scale + self.offset
        out = x.copy()
        out[..., self.mask] = x[..., self.mask] * self.scale + self.offset
        return out

    def inverse(self, y: np.ndarray) -> np.ndarray:
        if self.mask is None:
            return (y - self.offset) / self.scale
        out = y.copy()
        out[..., self.mask] = (y[..., self.mask] - self.offset) / self.scale
        return out


@dataclass(frozen=True)
class Clip:
    """Clamp the selected elements into [lo, hi] (LeRobot bounds its normalized ranges the same way)."""

    op: str
    lo: float
    hi: float
    mask: np.ndarray | None = field(default=None, compare=False)

    def forward(self, x: np.ndarray) -> np.ndarray:
        if self.mask is None:
            return np.clip(x, self.lo, self.hi)
        out = x.copy()
        out[..., self.mask] = np.clip(x[..., self.mask], self.lo, self.hi)
        return out

    def inverse(self, y: np.ndarray) -> np.ndarray:  # clipping loses nothing inside the range
        return y


class ElementwisePath:
    """A vector's numeric transforms applied element by element on plain Python floats.

    Why: a control tick converts one state and one action of a few values. Right after a policy's torch work
    has evicted numpy's code from the CPU caches each numpy call on such a vector costs 10-20 us, a float
    operation well under one. The operations are the same IEEE double ones in the same order as `forward` /
    `inverse` (clip as max then min, as np.clip), so results are bit-identical to the numpy path.
    """

    def __init__(self, transforms: Sequence[Affine | Clip], width: int):
        self.width = width
        self._forward: list[list[Affine | Clip]] = [[] for _ in range(width)]
        for t in transforms:
            if not isinstance(t, (Affine, Clip)):
                raise TypeError(f"{type(t).__name__} is not an element-wise numeric transform")
            if t.mask is not None and len(t.mask) != width:
                raise ValueError(f"transform {t.op} selects from {len(t.mask)} values, the vector has {width}")
            for i in range(width):
                if t.mask is None or t.mask[i]:
                    self._forward[i].append(t)
        self._inverse = [[t for t in reversed(ops) if isinstance(t, Affine)] for ops in self._forward]

    def forward(self, values: Sequence[float]) -> list[float]:
        """ROS units -> LeRobot units (float64 values; the caller casts)."""
        out = []
        for v, ops in zip(values, self._forward, strict=True):
            for t in ops:
                v = v * t.scale + t.offset if isinstance(t, Affine) else min(max(v, t.lo), t.hi)
            out.append(v)
        return out

    def inverse(self, values: Sequence[float]) -> list[float]:
        """LeRobot units -> ROS units (clipping has no inverse step: it loses nothing inside its range)."""
        out = []
        for v, ops in zip(values, self._inverse, strict=True):
            for t in ops:
                v = (v - t.offset) / t.scale
            out.append(v)
        return out


@dataclass(frozen=True)
class Crop:
    """Keep pixels [top:top+height, left:left+width]."""

    top: int
    left: int
    height: int
    width: int

    def apply(self, img: np.ndarray) -> np.ndarray:
        h, w = img.shape[:2]
        if self.top + self.height > h or self.left + self.width > w:
            raise ContractError(
                f"crop {self.height}x{self.width} at ({self.top}, {self.left}) does not fit a {h}x{w} image"
            )
        return img[self.top : self.top + self.height, self.left : self.left + self.width]


@dataclass(frozen=True)
class Resize:
    """Resize to height x width (OpenCV INTER_AREA when shrinking, INTER_LINEAR when growing); no-op if equal."""

    height: int
    width: int

    def apply(self, img: np.ndarray) -> np.ndarray:
        h, w = img.shape[:2]
        if (h, w) == (self.height, self.width):
            return img
        interp = cv2.INTER_AREA if self.height * self.width < h * w else cv2.INTER_LINEAR
        return cv2.resize(np.ascontiguousarray(img), (self.width, self.height), interpolation=interp)


NUMERIC_OPS = ("rad2deg", "deg2rad", "scale", "offset", "linear", "clip")
IMAGE_OPS = ("crop", "resize")


def _number(value, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ContractError(f"expected a number, got {value!r}", key)
    return float(value)


def _pair(value, key: str) -> tuple[float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ContractError(f"expected a list of two numbers [a, b], got {value!r}", key)
    return _number(value[0], f"{key}[0]"), _number(value[1], f"{key}[1]")


def _mask(only, names: Sequence[str], key: str) -> np.ndarray | None:
    if only is None:
        return None
    if not isinstance(only, list) or not only:
        raise ContractError(f"expected a non-empty list of element names or indices, got {only!r}", key)
    mask = np.zeros(len(names), dtype=bool)
    for i, item in enumerate(only):
        if isinstance(item, int) and not isinstance(item, bool):
            if not 0 <= item < len(names):
                raise ContractError(f"index {item} is out of range for {len(names)} values", f"{key}[{i}]")
            mask[item] = True
        elif isinstance(item, str):
            matches = [j for j, n in enumerate(names) if n == item or n.split(".")[0] == item]
            if not matches:
                raise ContractError(f"no value named {item!r}; this feature has {list(names)}", f"{key}[{i}]")
            mask[matches] = True
        else:
            raise ContractError(f"expected a name or an index, got {item!r}", f"{key}[{i}]")
    return mask


def parse_numeric(spec, names: Sequence[str], key: str):
    """One numeric transform from its YAML form: `rad2deg`, `{scale: k}`, `{linear: {from: [a, b], to: [c, d]}}`..."""
    if isinstance(spec, str):
        spec = {spec: True}
    if not isinstance(spec, dict):
        raise ContractError(f"expected a transform such as 'rad2deg' or {{linear: ...}}, got {spec!r}", key)
    ops = [k for k in spec if k != "only"]
    if len(ops) != 1 or ops[0] not in NUMERIC_OPS:
        raise ContractError(
            f"expected exactly one of {list(NUMERIC_OPS)} (plus optional 'only'), got {list(spec)}", key
        )
    op = ops[0]
    arg = spec[op]
    mask = _mask(spec.get("only"), names, f"{key}.only")
    akey = f"{key}.{op}"
    if op in ("rad2deg", "deg2rad") and arg not in (True, None):
        raise ContractError(
            f"{op} takes no value (got {arg!r}): write `- {op}` to convert, or remove it to keep the units", akey
        )
    if op == "rad2deg":
        return Affine(op, 180.0 / np.pi, 0.0, mask)
    if op == "deg2rad":
        return Affine(op, np.pi / 180.0, 0.0, mask)
    if op == "scale":
        k = _number(arg, akey)
        if k == 0:
            raise ContractError("scale must not be 0 (it has no inverse)", akey)
        return Affine(op, k, 0.0, mask)
    if op == "offset":
        return Affine(op, 1.0, _number(arg, akey), mask)
    if op == "clip":
        lo, hi = _pair(arg, akey)
        if lo >= hi:
            raise ContractError(f"clip needs lo < hi, got [{lo}, {hi}]", akey)
        return Clip(op, lo, hi, mask)
    # linear: map [a, b] onto [c, d]
    if not isinstance(arg, dict) or set(arg) - {"from", "to"} or not {"from", "to"} <= set(arg):
        raise ContractError(f"linear needs {{from: [a, b], to: [c, d]}}, got {arg!r}", akey)
    a, b = _pair(arg["from"], f"{akey}.from")
    c, d = _pair(arg["to"], f"{akey}.to")
    if a == b or c == d:
        raise ContractError("linear needs two different values on each side", akey)
    scale = (d - c) / (b - a)
    return Affine(op, scale, c - a * scale, mask)


def parse_image(spec, key: str):
    """One image transform: `{crop: [top, left, height, width]}` or `{resize: [height, width]}`."""
    if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in IMAGE_OPS:
        raise ContractError(
            f"expected {{crop: [top, left, height, width]}} or {{resize: [height, width]}}, got {spec!r}", key
        )
    op, arg = next(iter(spec.items()))
    size = 4 if op == "crop" else 2
    if (
        not isinstance(arg, list)
        or len(arg) != size
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in arg)
    ):
        raise ContractError(f"{op} needs {size} non-negative integers, got {arg!r}", f"{key}.{op}")
    if op == "crop":
        if arg[2] == 0 or arg[3] == 0:
            raise ContractError("crop height and width must be positive", f"{key}.crop")
        return Crop(*arg)
    if 0 in arg:
        raise ContractError("resize height and width must be positive", f"{key}.resize")
    return Resize(*arg)
