"""Check that a policy's input/output features match what a contract provides, before anything runs."""

from __future__ import annotations

from typing import Mapping


def policy_io(config) -> tuple[dict[str, tuple[int, ...]], dict[str, tuple[int, ...]]]:
    """(inputs, outputs) of a LeRobot policy config as name -> shape (images channels-first)."""
    inputs = {k: tuple(v.shape) for k, v in (config.input_features or {}).items()}
    outputs = {k: tuple(v.shape) for k, v in (config.output_features or {}).items()}
    return inputs, outputs


def _as_policy_shape(shape: tuple[int, ...], is_image: bool) -> tuple[int, ...]:
    """Dataset image shapes are (H, W, C); policies see (C, H, W)."""
    if is_image and len(shape) == 3:
        h, w, c = shape
        return (c, h, w)
    return tuple(shape)


def feature_mismatches(config, provided: Mapping[str, dict]) -> list[str]:
    """Every way the policy and the contract's features disagree (empty list: they match).

    `provided` is `Contract.lerobot_features()`: name -> {"dtype", "shape", ...} in dataset layout.
    Extra contract features the policy does not read are fine.
    """
    inputs, outputs = policy_io(config)
    problems = []
    for name, want in {**inputs, **outputs}.items():
        if name not in provided:
            problems.append(f"policy needs {name} {list(want)} but the contract has no such feature")
            continue
        spec = provided[name]
        is_image = spec.get("dtype") in ("image", "video")
        have = _as_policy_shape(tuple(spec["shape"]), is_image)
        if have != tuple(want):
            problems.append(f"{name}: policy expects shape {list(want)}, the contract gives {list(have)}")
    return problems
