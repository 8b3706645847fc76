"""argparse types the verbs share."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def render_size(minimum: int = 1) -> Callable[[str], tuple[int, int]]:
    """`--render HxW` -> (height, width) as `lerobot_ros.sim.RenderSize` (the one parser of that form)."""

    def parse(text: str):
        from lerobot_ros.sim.base import RenderSize

        try:
            return RenderSize.parse(text, minimum)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse
