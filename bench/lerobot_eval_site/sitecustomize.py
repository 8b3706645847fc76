"""Render size and shadows for LeRobot's own Meta-World env in an unchanged `lerobot-eval` process tree.

LeRobot 0.6.1's `MetaworldEnv` always renders 480x480 with shadows: `--env.type=metaworld` has no
render-size option (its `gym_kwargs` pass obs_type and render_mode only, and `observation_width` would
not reach the simulator's renderer anyway). bench/eval.py puts this folder on PYTHONPATH of the
lerobot-eval command only, with LEROBOT_ROS_BENCH_RENDER=HxW (and LEROBOT_ROS_BENCH_SHADOWS=1 to keep
shadows, LEROBOT_ROS_BENCH_MAX_STEPS=N to cut episodes at N steps as `lerobot-ros eval --max-episode-steps` does): Python imports `sitecustomize` at start-up in the command and in every env worker it spawns
(forkserver), and when `lerobot.envs.metaworld` is imported its env renders through
`lerobot_ros.sim.metaworld_env.configure_metaworld_render`, the function the sim bridge uses. Nothing
is imported before lerobot-eval imports the env itself, so its start-up is not changed.
"""

import importlib.abc
import importlib.machinery
import os
import sys

_MODULE = "lerobot.envs.metaworld"
_SIZE = os.environ.get("LEROBOT_ROS_BENCH_RENDER", "")


def _patch(module) -> None:
    from lerobot_ros.sim.base import RenderSettings
    from lerobot_ros.sim.metaworld_env import configure_metaworld_render

    h, w = (int(v) for v in _SIZE.lower().split("x"))
    settings = RenderSettings.of_size((h, w), os.environ.get("LEROBOT_ROS_BENCH_SHADOWS") == "1", True)
    cls = module.MetaworldEnv
    init, ensure = cls.__init__, cls._ensure_env

    max_steps = int(os.environ.get("LEROBOT_ROS_BENCH_MAX_STEPS") or 0)

    def __init__(self, *args, **kwargs):  # noqa: N807 - replaces the env class's own; the observation space (shared memory of async envs) at that size
        kwargs["observation_width"], kwargs["observation_height"] = w, h
        init(self, *args, **kwargs)
        if max_steps:  # what the rollout reads through env.call("_max_episode_steps"), as the bridge sets it
            self._max_episode_steps = max_steps

    def _ensure_env(self):
        if self._env is None:
            ensure(self)
            configure_metaworld_render(self, settings)

    cls.__init__, cls._ensure_env = __init__, _ensure_env


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


if _SIZE:
    sys.meta_path.insert(0, _Finder())
