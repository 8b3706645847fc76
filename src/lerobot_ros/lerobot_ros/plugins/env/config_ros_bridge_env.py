"""The env plugin's config, registered with LeRobot as `ros_bridge` (`lerobot-eval --env.type=ros_bridge`).

A policy evaluated by LeRobot's own `lerobot-eval` through a simulator behind a ROS sim bridge: the same
observations, rewards and success as LeRobot's native env for the same seeds (Meta-World), with lerobot-eval's
defaults (auto batch size, async vector envs). Every field has a default, as LeRobot's env configs do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gymnasium as gym
from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.envs.configs import EnvConfig
from lerobot.utils.constants import ACTION, OBS_IMAGE, OBS_STATE

ENV_TYPE = "ros_bridge"


@EnvConfig.register_subclass(ENV_TYPE)
@dataclass
class RosBridgeEnvConfig(EnvConfig):
    """`sim`: the simulator behind the bridge (metaworld). `task`: its task (Meta-World: `push-v3` ...).
    `observation_width` / `observation_height`: the camera's render size (LeRobot's Meta-World renders 480x480).
    `episode_length`: steps before an episode is cut (0: the simulator's own, Meta-World's 500). `shadows` /
    `antialias`: render settings (on, as LeRobot's native env renders; off is several times faster on a CPU).
    `startup_timeout_s`: how long a worker waits for its bridge process; `step_timeout_s`: for one step."""

    sim: str = "metaworld"
    task: str | None = "push-v3"
    fps: int = 80
    observation_width: int = 480
    observation_height: int = 480
    episode_length: int = 0
    shadows: bool = True
    antialias: bool = True
    startup_timeout_s: float = 300.0
    step_timeout_s: float = 120.0
    features: dict[str, PolicyFeature] = field(default_factory=dict)
    features_map: dict[str, str] = field(
        default_factory=lambda: {"action": ACTION, "agent_pos": OBS_STATE, "pixels": OBS_IMAGE}
    )

    def __post_init__(self) -> None:
        from lerobot_ros.plugins.env.bridge_env import LAYOUTS

        if self.sim not in LAYOUTS:
            raise ValueError(f"--env.sim must be one of {', '.join(LAYOUTS)}, got {self.sim!r}")
        if self.observation_width <= 0 or self.observation_height <= 0:
            raise ValueError("--env.observation_width and --env.observation_height must be positive")
        if self.task is not None:
            from lerobot_ros.sim.registry import expand_tasks

            tasks = expand_tasks(self.sim, self.task)  # an unknown task fails here, in one line
            if len(tasks) != 1:
                raise ValueError(
                    f"--env.task {self.task!r} names {len(tasks)} tasks; the ros_bridge env runs one task per "
                    "lerobot-eval (lerobot-ros eval runs several)"
                )
        layout = LAYOUTS[self.sim]
        self.features = {
            "action": PolicyFeature(type=FeatureType.ACTION, shape=(layout["action_dim"],)),
            "agent_pos": PolicyFeature(type=FeatureType.STATE, shape=(layout["state_dim"],)),
            "pixels": PolicyFeature(
                type=FeatureType.VISUAL, shape=(self.observation_height, self.observation_width, 3)
            ),
        }

    @property
    def package_name(self) -> str:
        return "lerobot_env_ros_bridge"

    @property
    def gym_kwargs(self) -> dict:
        return {
            "sim": self.sim,
            "task": self.task,
            "observation_width": self.observation_width,
            "observation_height": self.observation_height,
            "episode_length": self.episode_length,
            "shadows": self.shadows,
            "antialias": self.antialias,
            "startup_timeout_s": self.startup_timeout_s,
            "step_timeout_s": self.step_timeout_s,
        }

    def create_envs(self, n_envs: int, use_async_envs: bool = False) -> dict[str, dict[int, gym.vector.VectorEnv]]:
        """{sim: {0: VectorEnv of n_envs bridge envs}}; each sub-env stops stepping once its episode ended (LeRobot's
        FreezeAfterEpisodeEnd: a finished bridge episode refuses actions until the next reset)."""
        from lerobot.envs.utils import FreezeAfterEpisodeEnd

        from lerobot_ros.plugins.env.bridge_env import RosBridgeEnv

        kwargs = self.gym_kwargs
        if self.task is None:
            raise ValueError("--env.task is required (e.g. push-v3)")

        def make() -> gym.Env:
            return FreezeAfterEpisodeEnd(RosBridgeEnv(**kwargs))

        fns = [make for _ in range(n_envs)]
        if use_async_envs and n_envs > 1:
            vec: gym.vector.VectorEnv = gym.vector.AsyncVectorEnv(fns, context="forkserver")
        else:
            vec = gym.vector.SyncVectorEnv(fns)
        return {self.sim: {0: vec}}
