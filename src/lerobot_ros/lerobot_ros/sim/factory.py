"""Build a SimEnv from the bridge's parameters (env kind + task), without creating the simulator yet."""

from __future__ import annotations

from lerobot_ros.sim.base import RenderSettings, SimEnv, SimStartupError

ENV_KINDS = ("metaworld", "so101", "libero")


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
    """env: metaworld (task: a -v3 name), so101 (task: scene name or MJCF path), libero (task: suite name).

    fps / max_episode_steps of 0 keep the env's own; so101 only: cameras name MJCF cameras, camera_fps
    (0: every step) renders them at a lower rate, meshes "full" draws the package's meshes.
    """
    if env == "metaworld":
        from lerobot_ros.sim.metaworld_env import MetaWorldSim

        sim = MetaWorldSim(task or "push-v3", render)
        if fps:
            raise SimStartupError("Meta-World's rate is fixed (80 fps, as LeRobot runs it); leave fps at 0")
    elif env == "so101":
        from lerobot_ros.sim.so101_twin import SO101Twin

        cams = ("front",) if cameras is None else tuple(cameras)
        sim = SO101Twin(scene=task or "pick", cameras=cams, fps=fps or 30.0, render=render,
                        meshes=meshes, camera_fps=camera_fps or None)
    elif env == "libero":
        from lerobot_ros.sim.libero_env import LiberoSim

        sim = LiberoSim(task or "libero_spatial", task_id, render)
    else:
        raise SimStartupError(f"unknown env {env!r}; use one of {', '.join(ENV_KINDS)}")
    if max_episode_steps:
        sim.max_episode_steps = int(max_episode_steps)
    return sim
