"""The conversion a user asks for, in one call: on this machine or as Ray shards, then the upload.

`convert(ConvertConfig) -> ConvertResult` is what the `convert` verb, the recorder's background conversion
and `lerobot-ros eval --dataset.root` (through the verb) run; the work is in `conversion` (local) and
`ray_conversion` (shards as Ray tasks, merged).
"""

from __future__ import annotations

from collections.abc import Callable

from lerobot_ros.dataset.config import ConvertConfig
from lerobot_ros.dataset.conversion import ConvertResult, convert_local, push


def _quiet(_text: str) -> None:
    return None


def convert(cfg: ConvertConfig, *, say: Callable[[str], None] = _quiet) -> ConvertResult:
    """Convert `cfg.bags` into the dataset at `cfg.root` (see `lerobot_ros.dataset.conversion`); `say` gets
    one-line notes (e.g. why fewer decode processes run than asked for)."""
    if cfg.executor == "ray":
        from lerobot_ros.dataset.ray_conversion import convert_with_ray

        result = convert_with_ray(cfg, say=say)
    else:
        result = convert_local(cfg, say)
    if result.dataset is not None and cfg.push_to_hub and not result.interrupted:
        result.uploaded, result.upload_error = push(result.dataset, result.repo_id)
    return result
