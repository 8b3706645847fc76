"""Layer 2: one resampler that turns timestamped samples per stream into frames on the fps grid.

Policies (per stream): hold, asof (tolerance), nearest, interpolate (numeric only). The batch form
(`resample`) serves the bag converter; the streaming form (`StreamingResampler.push` / `frame_at`)
serves the live policy node and the recorder's QA. Both call `core.plan_stream`, and both report per
stream what they had to do (`StreamReport`: held, interpolated, stale and missing frames, staleness,
gaps, dropped out-of-order samples), serializable to JSON.
"""

from lerobot_ros.resample.batch import Resampled, Stream, resample
from lerobot_ros.resample.core import (
    EXACT,
    HELD,
    INTERP,
    MISSING,
    POLICIES,
    STALE,
    STATUS_NAMES,
    Plan,
    clean_order,
    gather_numeric,
    grid_between,
    plan_stream,
)
from lerobot_ros.resample.live import Frame, StreamingResampler, StreamSpec
from lerobot_ros.resample.report import ResampleReport, StreamReport

__all__ = [
    "EXACT",
    "HELD",
    "INTERP",
    "MISSING",
    "POLICIES",
    "STALE",
    "STATUS_NAMES",
    "Frame",
    "Plan",
    "ResampleReport",
    "Resampled",
    "Stream",
    "StreamReport",
    "StreamSpec",
    "StreamingResampler",
    "clean_order",
    "gather_numeric",
    "grid_between",
    "plan_stream",
    "resample",
]
