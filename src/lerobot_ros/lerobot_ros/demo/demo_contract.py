"""The demo's contract: the shipped one for the simulator, pointed at the camera the bridge renders.

The shipped Meta-World contract names the 480x480 `corner2` image LeRobot uses; the bridge renders it
at the size the demo asks for (small, so a 2-core machine records and encodes quickly).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from lerobot_ros.contract import load_contract
from lerobot_ros.contract.loader import resolve


def write_demo_contract(
    base: str, out: Path, image_topic: str, height: int, width: int, namespace: str = "/sim"
) -> Path:
    """Copy contract `base` to `out` with its single image feature on `image_topic` at height x width.

    One bag per episode: the episode_boundary key is dropped (the demo starts and stops the recorder per
    episode, as lerobot-record does), so every bag converts to exactly one episode.
    """
    data = yaml.safe_load(resolve(base).read_text())
    images = [k for k, f in data["features"].items() if "image" in k]
    if len(images) != 1:
        raise ValueError(f"the demo expects one image feature in contract {base!r}, found {images}")
    feature = data["features"][images[0]]
    feature["topic"] = f"{namespace}/{image_topic}"
    feature["shape"] = [height, width, 3]
    feature.pop("transforms", None)
    data.pop("episode_boundary", None)
    data["description"] = f"{data.get('description', base)} (lerobot-ros demo: {image_topic} at {height}x{width})"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    load_contract(str(out))  # validate now: a bad contract fails here, not after recording
    return out
