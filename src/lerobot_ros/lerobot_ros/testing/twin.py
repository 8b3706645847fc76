"""The SO-101 twin as LeRobot's CLIs see it through the plugins (shared by the plugin tests and bench/plugin.py):
a sim_bridge_node command in realtime mode with episodes marked, not enforced (it keeps publishing and obeying
like a real arm), and its contract at a small render size with a second (wrist) camera."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

BIN = Path(sys.executable).parent


def twin_command(
    width: int = 128, height: int = 96, cameras: tuple[str, ...] = ("front", "wrist"), episode_length: int = 20
) -> list[str]:
    """sim_bridge_node in /sim, realtime, `episode_limit:=marked` (an `episode_length` far shorter than a
    recording shows that the twin goes on past it)."""
    params = {
        "env.type": "so101",
        "mode": "realtime",
        "cameras": f"[{','.join(cameras)}]",
        "env.observation_width": width,
        "env.observation_height": height,
        "antialias": "false",
        "episode_limit": "marked",
        "env.episode_length": episode_length,
    }
    cmd = [str(BIN / "sim_bridge_node"), "--ros-args", "-r", "__ns:=/sim"]
    for name, value in params.items():
        cmd += ["-p", f"{name}:={value}"]
    return cmd


def twin_contract(path: Path, width: int = 128, height: int = 96, **topic_renames: str) -> Path:
    """so101_sim at `height` x `width` with a second (wrist) camera; `topic_renames` swaps topics (bad contracts)."""
    from lerobot_ros.contract import load_contract

    data = json.loads(json.dumps(load_contract("so101_sim").raw))
    front = data["features"]["observation.images.front"]
    front["shape"], front["transforms"] = [height, width, 3], [{"resize": [height, width]}]
    data["features"]["observation.images.wrist"] = dict(front, topic="/sim/wrist/image_raw")
    for feature in data["features"].values():
        feature["topic"] = topic_renames.get(feature["topic"], feature["topic"])
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
