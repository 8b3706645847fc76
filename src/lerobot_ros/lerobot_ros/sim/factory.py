"""Build a SimEnv from the bridge's parameters (env kind + task), without creating the simulator yet."""

from __future__ import annotations

from lerobot_ros.sim.base import RenderSettings, SimEnv
from lerobot_ros.sim.registry import ENV_KINDS, build_sim

__all__ = ["ENV_KINDS", "make_sim"]


def make_sim(
    env: str,
    task: str = "",
    render: RenderSettings | None = None,
    fps: float = 0.0,
    cameras: list[str] | None = None,
    task_id: int = 0,
    max_episode_steps: int = 0,
    camera_fps: float = 0.0,
    meshes: str = "simplified",
) -> SimEnv:
    """env: a kind of `lerobot_ros.sim.registry.SIMS` (metaworld: a -v3 task name; so101: scene name or
    MJCF path; libero: suite name).

    fps / max_episode_steps of 0 keep the env's own; so101 only: cameras name MJCF cameras, camera_fps
    (0: every step) renders them at a lower rate, meshes "full" draws the package's meshes.
    """
    sim = build_sim(env, task, render, fps=fps, cameras=cameras, task_id=task_id, camera_fps=camera_fps, meshes=meshes)
    if max_episode_steps:
        sim.max_episode_steps = int(max_episode_steps)
    return sim
