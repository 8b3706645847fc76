"""Simulators behind one interface (`SimEnv`) for the sim bridge node, the scripted experts and eval.

Layering: this package uses only numpy, MuJoCo and LeRobot's env modules, never rclpy.
"""

from lerobot_ros.sim.actions import ActionRejected, ActionValidator
from lerobot_ros.sim.base import Observation, RenderSettings, RenderSize, SimEnv, SimStartupError, StepResult
from lerobot_ros.sim.factory import ENV_KINDS, make_sim
from lerobot_ros.sim.stepping import ActionSchedule, EpisodeState, Frame, SimRunner

__all__ = [
    "ENV_KINDS",
    "ActionRejected",
    "ActionSchedule",
    "ActionValidator",
    "EpisodeState",
    "Frame",
    "Observation",
    "RenderSettings",
    "RenderSize",
    "SimEnv",
    "SimRunner",
    "SimStartupError",
    "StepResult",
    "make_sim",
]
