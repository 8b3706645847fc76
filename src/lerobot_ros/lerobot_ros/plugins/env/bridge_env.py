"""`RosBridgeEnv`: a gymnasium env whose simulator runs behind a ROS sim bridge (the lerobot-eval env plugin).

Its observations are LeRobot's own env's layout (Meta-World: `pixels` (H, W, 3) uint8 and `agent_pos` (4,)), so
lerobot-eval's `preprocess_observation` and a policy trained on LeRobot's env take them unchanged; the task text,
`_max_episode_steps`, `is_success` in `info`, `render()` and `metadata["render_fps"]` are what lerobot-eval reads.
Nothing ROS happens in `__init__`: LeRobot's async vector env builds a throw-away instance in its parent process
to read the spaces; each worker starts its own bridge process and rclpy context on its first `reset()` (the
`_ensure_env()` pattern of LeRobot's benchmark guide), one bridge per worker.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from lerobot_ros.eval.bridge_session import BridgeSession, SessionConfig, StepOutcome
from lerobot_ros.sim import RenderSettings

#: per simulator: the observation keys of LeRobot's own env <- the sim contract's features, its action size,
#: control rate and default episode length (Meta-World's path length is fixed at 500)
LAYOUTS: dict[str, dict[str, Any]] = {
    "metaworld": {
        "pixels": "observation.image",
        "agent_pos": "observation.state",
        "state_dim": 4,
        "action_dim": 4,
        "fps": 80,
        "episode_length": 500,
    },
}


class RosBridgeEnv(gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 80}

    def __init__(
        self,
        sim: str = "metaworld",
        task: str = "push-v3",
        observation_width: int = 480,
        observation_height: int = 480,
        episode_length: int = 0,
        shadows: bool = True,
        antialias: bool = True,
        startup_timeout_s: float = 300.0,
        step_timeout_s: float = 120.0,
    ):
        super().__init__()
        if sim not in LAYOUTS:
            raise ValueError(f"the ros_bridge env runs {', '.join(LAYOUTS)}; got sim {sim!r}")
        layout = LAYOUTS[sim]
        self.sim, self.task, self.layout = sim, task, layout
        self.metadata = {**self.metadata, "render_fps": layout["fps"]}
        self.render_mode = "rgb_array"
        self._max_episode_steps = int(episode_length) or int(layout["episode_length"])
        self.session_config = SessionConfig(
            env_type=sim,
            task=task,
            render=RenderSettings(int(observation_width), int(observation_height), bool(shadows), bool(antialias)),
            episode_length=int(episode_length),
            startup_timeout_s=startup_timeout_s,
            step_timeout_s=step_timeout_s,
        )
        h, w = self.size = int(observation_height), int(observation_width)
        self.observation_space = gym.spaces.Dict(
            {
                "pixels": gym.spaces.Box(0, 255, (h, w, 3), dtype=np.uint8),
                "agent_pos": gym.spaces.Box(-1000.0, 1000.0, (layout["state_dim"],), dtype=np.float64),
            }
        )
        self.action_space = gym.spaces.Box(-1.0, 1.0, (layout["action_dim"],), dtype=np.float32)
        self._session: BridgeSession | None = None
        self._last: StepOutcome | None = None
        self._task_text = ""

    # -- lerobot-eval's reads -------------------------------------------------------------------------
    @property
    def task_description(self) -> str:
        return self._task_text or self.task

    def render(self) -> np.ndarray:
        if self._last is None:
            h, w = self.size
            return np.zeros((h, w, 3), np.uint8)
        return self._last.values[self.layout["pixels"]]

    # -- gymnasium ------------------------------------------------------------------------------------
    def _ensure_env(self) -> BridgeSession:
        if self._session is None:
            session = BridgeSession(self.session_config)
            try:
                session.start()
            except BaseException:
                session.close()
                raise
            self._session = session
        return self._session

    def _observation(self, outcome: StepOutcome) -> dict[str, np.ndarray]:
        return {
            "pixels": outcome.values[self.layout["pixels"]],
            "agent_pos": np.asarray(outcome.values[self.layout["agent_pos"]], dtype=np.float64),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        outcome = self._ensure_env().reset(seed)
        self._last, self._task_text = outcome, outcome.task
        return self._observation(outcome), {"is_success": False, "task": self.task_description}

    def step(self, action):
        if self._last is None:
            raise RuntimeError("call reset() before step()")
        last = self._last
        outcome = self._ensure_env().step(last.episode_index, last.step, np.asarray(action, dtype=np.float64))
        self._last = outcome
        terminated = outcome.done and outcome.success
        truncated = outcome.done and not outcome.success
        info = {"is_success": outcome.success, "done": outcome.done, "task": self.task_description}
        return self._observation(outcome), outcome.reward, terminated, truncated, info

    def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()
