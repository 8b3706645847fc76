"""Meta-World (any `-v3` task) through LeRobot's own `MetaworldEnv`, so the bridge steps exactly what
`lerobot-eval` steps: same seeding, same camera (corner2, flipped), same success and reward.

Published state: LeRobot's 4-D `agent_pos` (hand xyz, gripper distance). The env's full 39-D
observation goes out as env_state (the scripted experts need it). Render size and shadows are applied
to the simulator after it is built (LeRobot's wrapper always renders 480x480 with shadows).
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import json
import threading
import time
from pathlib import Path
from typing import Any, cast

import numpy as np

from lerobot_ros.sim.base import Observation, RenderSettings, SimEnv, SimStartupError, StepResult

STATE_NAMES = ("hand_x", "hand_y", "hand_z", "gripper_distance")
ACTION_NAMES = ("delta_x", "delta_y", "delta_z", "gripper")
CAMERA = "corner2"


def _env_state_names() -> tuple[str, ...]:
    """Names of Meta-World's 39-D observation: current frame (18), previous frame (18), goal (3)."""
    frame = ["hand_x", "hand_y", "hand_z", "gripper_distance"]
    for obj in ("obj0", "obj1"):
        frame += [f"{obj}_{c}" for c in ("x", "y", "z", "qw", "qx", "qy", "qz")]
    return tuple(frame + [f"prev_{n}" for n in frame] + ["goal_x", "goal_y", "goal_z"])


ENV_STATE_NAMES = _env_state_names()


@functools.lru_cache(maxsize=1)
def lerobot_metaworld_config() -> dict:
    """LeRobot's metaworld_config.json (task descriptions, difficulty groups, expert per task), read without
    importing LeRobot: `lerobot.envs.metaworld` pulls in torch and LeRobot's configs, which takes tens of
    seconds on a busy machine (start-up errors come fast, and the expert node starts without torch)."""
    spec = importlib.util.find_spec("lerobot")
    if spec is None or importlib.util.find_spec("metaworld") is None:
        raise ImportError("lerobot or metaworld is missing")
    # lerobot is a package: its submodule_search_locations is a list, never None
    config = Path(next(iter(cast("list[str]", spec.submodule_search_locations)))) / "envs" / "metaworld_config.json"
    return json.loads(config.read_text())


def metaworld_tasks() -> dict[str, str]:
    """Task name -> description, as LeRobot knows them."""
    return dict(lerobot_metaworld_config()["TASK_DESCRIPTIONS"])


def check_metaworld_task(task: str) -> str:
    """The bare task name (without a `metaworld-` prefix); SimStartupError with suggestions if unknown."""
    try:
        tasks = metaworld_tasks()
    except ImportError as exc:
        raise SimStartupError(
            f'Meta-World is not installed ({exc}); install the sim extra: pip install "lerobot-ros[sim]" '
            "(make setup does)"
        ) from None
    name = task.removeprefix("metaworld-")
    if name not in tasks:
        close = difflib.get_close_matches(name, list(tasks), n=3)
        hint = f"did you mean {', '.join(close)}?" if close else "use a `-v3` task name such as push-v3"
        raise SimStartupError(f"unknown Meta-World task {task!r}: {hint} ({len(tasks)} tasks known)")
    return name


def configure_metaworld_render(lerobot_env, settings: RenderSettings):
    """Apply render size and shadows to a LeRobot `MetaworldEnv` (builds its simulator if needed).

    Exposed so that a reference loop (LeRobot's own eval) can render with the same settings.
    Returns the offscreen viewer (its GL context is current afterwards).
    """
    import mujoco

    lerobot_env._ensure_env()
    inner = lerobot_env._env
    renderer = inner.mujoco_renderer
    if renderer._viewers:  # already rendering at another size: start a fresh viewer
        renderer.close()
        renderer._viewers = {}
    renderer.width, renderer.height = settings.width, settings.height
    vis = inner.model.vis
    vis.global_.offwidth = max(vis.global_.offwidth, settings.width)
    vis.global_.offheight = max(vis.global_.offheight, settings.height)
    if not settings.shadows:
        vis.quality.shadowsize = 0  # no shadow map allocated at all
    if not settings.antialias:
        vis.quality.offsamples = 0
    viewer = renderer._get_viewer("rgb_array")
    viewer.scn.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = int(settings.shadows)
    return viewer


class MetaWorldSim(SimEnv):
    kind = "metaworld"
    fps = 80.0
    state_names = STATE_NAMES
    action_names = ACTION_NAMES
    env_state_names = ENV_STATE_NAMES

    def __init__(self, task: str = "push-v3", render: RenderSettings | None = None, camera_name: str = CAMERA):
        super().__init__(render)
        self.task_name = check_metaworld_task(task)
        self.camera_name = camera_name
        self.max_episode_steps = 500  # MT1 tasks' max_path_length, which LeRobot's rollout uses
        self._env: Any = None  # LeRobot's MetaworldEnv (untyped), built on the first reset
        self._last_raw: np.ndarray | None = None

    @property
    def task(self) -> str:
        return metaworld_tasks()[self.task_name]

    @property
    def cameras(self) -> dict[str, tuple[int, int]]:
        return {self.camera_name: (self.render_settings.height, self.render_settings.width)}

    @property
    def lerobot_env(self):
        """The wrapped LeRobot MetaworldEnv (None before the first reset)."""
        return self._env

    def preflight(self) -> None:
        check_metaworld_task(self.task_name)

    def prefetch(self) -> None:
        """Import LeRobot's Meta-World env (torch, LeRobot's configs, Meta-World: the bulk of a first reset on
        a CPU) in a thread while the bridge waits for its first reset; no simulator, no GL context."""
        if getattr(self, "_prefetch", None) is None:

            def load():
                import lerobot.envs.metaworld  # noqa: F401

            self._prefetch = threading.Thread(target=load, name="metaworld-prefetch", daemon=True)
            self._prefetch.start()

    def _build(self) -> None:
        if getattr(self, "_prefetch", None) is not None:
            self._prefetch.join()  # one importer at a time
        from lerobot.envs.metaworld import MetaworldEnv

        env = MetaworldEnv(task=self.task_name, camera_name=self.camera_name, obs_type="pixels_agent_pos")
        self._viewer = configure_metaworld_render(env, self.render_settings)
        inner = env._env
        # Keep the raw 39-D observation of the last inner step/reset (LeRobot's wrapper drops it).
        step, reset = inner.step, inner.reset

        def capture_step(action):
            t0 = time.perf_counter()
            out = step(action)
            self.last_physics_s = time.perf_counter() - t0  # the rest of env.step renders (for --profile)
            self._last_raw = np.array(out[0], dtype=np.float64)
            return out

        def capture_reset(*args, **kwargs):
            out = reset(*args, **kwargs)
            self._reset_raw = np.array(out[0], dtype=np.float64)
            return out

        inner.step, inner.reset = capture_step, capture_reset
        self._env = env

    def _observation(self, obs: dict, raw: np.ndarray | None) -> Observation:
        return Observation(
            state=np.asarray(obs["agent_pos"], dtype=np.float64).copy(),
            images={self.camera_name: np.ascontiguousarray(obs["pixels"])},
            env_state=None if raw is None else raw.copy(),
        )

    def reset(self, seed: int | None = None, options: dict | None = None) -> Observation:
        if self._env is None:
            self._build()
        self._viewer.make_context_current()  # gymnasium renders into whatever context is current
        obs, _info = self._env.reset(seed=seed)
        return self._observation(obs, self._reset_raw)

    def step(self, action: np.ndarray) -> StepResult:
        if self._env is None:
            raise RuntimeError("step() before reset()")
        self._viewer.make_context_current()
        obs, reward, terminated, truncated, info = self._env.step(np.asarray(action, dtype=np.float32))
        # On success LeRobot's wrapper resets the simulator itself; the observation it returns (and the
        # raw state captured from the inner step) are those of the final step, which is what we publish.
        info = {k: info[k] for k in ("is_success", "done") if k in info}
        return StepResult(
            self._observation(obs, self._last_raw), float(reward), bool(terminated), bool(truncated), info
        )

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None
