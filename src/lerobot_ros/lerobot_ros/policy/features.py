"""Check that a policy's input/output features match what a contract provides, before anything runs."""

from __future__ import annotations

from collections.abc import Mapping


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


def image_resize(config) -> tuple[int, int] | None:
    """(height, width) a policy resizes (with padding) every camera image to inside its model, whatever size comes
    in (SmolVLA's `resize_imgs_with_padding`, stored as width, height; pi0 / pi0.5's `image_resolution`); None:
    the policy takes images at the size it was trained on."""
    kind = getattr(config, "type", None)
    if kind == "smolvla" and getattr(config, "resize_imgs_with_padding", None):
        w, h = config.resize_imgs_with_padding
        return int(h), int(w)
    if kind in ("pi0", "pi05", "pi0_fast") and getattr(config, "image_resolution", None):
        h, w = config.image_resolution
        return int(h), int(w)
    return None


def feature_mismatches(config, provided: Mapping[str, dict]) -> list[str]:
    """Every way the policy and the contract's features disagree (empty list: they match).

    `provided` is `Contract.lerobot_features()`: name -> {"dtype", "shape", ...} in dataset layout.
    Extra contract features the policy does not read are fine. Images of another size are fine for a policy
    that resizes them itself (`image_resize`), as its own processing does; otherwise both shapes are named.
    """
    inputs, outputs = policy_io(config)
    resized = image_resize(config)
    problems = []
    for name, want in {**inputs, **outputs}.items():
        if name not in provided:
            problems.append(f"policy needs {name} {list(want)} but the contract has no such feature")
            continue
        spec = provided[name]
        is_image = spec.get("dtype") in ("image", "video")
        have = _as_policy_shape(tuple(spec["shape"]), is_image)
        if resized is not None and is_image and len(have) == 3 and len(want) == 3 and have[0] == want[0]:
            continue  # the model resizes with padding to `resized`, as under lerobot-eval
        if have != tuple(want):
            problems.append(f"{name}: policy expects shape {list(want)}, the contract gives {list(have)}")
    return problems
