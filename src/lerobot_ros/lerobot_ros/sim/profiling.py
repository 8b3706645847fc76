"""Step timings of a simulator process for `lerobot-ros eval --profile`, written when the process exits.

Enabled by the environment variable LEROBOT_ROS_PROFILE_FILE (eval sets it for the bridges it starts):
the runner then sums, per step, the env's physics time and its whole step (physics + render; an env
that can tell them apart sets `last_physics_s`), and times each reset (the first builds the simulator).
Without the variable nothing is timed.
"""

from __future__ import annotations

import atexit
import json
import os
import time
from pathlib import Path

PROFILE_ENV = "LEROBOT_ROS_PROFILE_FILE"


class SimProfile:
    def __init__(self):
        self.path = os.environ.get(PROFILE_ENV) or None
        self.enabled = self.path is not None
        self.data = {
            "ready_wall": time.time(),
            "first_reset_s": None,
            "resets": 0,
            "reset_s": 0.0,
            "steps": 0,
            "step_s": 0.0,
            "physics_s": 0.0,
        }
        if self.enabled:
            atexit.register(self.dump)

    def reset_done(self, seconds: float) -> None:
        d = self.data
        if d["first_reset_s"] is None:
            d["first_reset_s"] = seconds
        else:
            d["reset_s"] += seconds
        d["resets"] += 1

    def step_done(self, seconds: float, physics_s: float | None) -> None:
        d = self.data
        d["steps"] += 1
        d["step_s"] += seconds
        d["physics_s"] += seconds if physics_s is None else physics_s

    def dump(self) -> None:
        try:
            path = Path(self.path)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".part")
            tmp.write_text(json.dumps(self.data))
            tmp.replace(path)
        except OSError:
            pass  # a profile is a diagnostic: never fail the process over it
