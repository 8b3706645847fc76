"""The main job on an embedded default (no hardware).

Until the simulator, recorder and eval pieces land, this runs the smallest end-to-end thing that
exists: `talker` and `listener` in two processes exchanging joint states and camera images over DDS.
"""

from __future__ import annotations

import argparse

from lerobot_ros.cli import smoke


def add_arguments(parser: argparse.ArgumentParser) -> None:
    smoke.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return smoke.run(args)
