"""Settings of the simulator nodes (sim_bridge_node, scripted_expert_node), declared once.

The simulator is named as lerobot-eval names it: `env.type` (metaworld, libero, so101), `env.task`,
`env.observation_height` / `env.observation_width` (the render size) and `env.episode_length`.
"""

from __future__ import annotations

from dataclasses import dataclass

from lerobot_ros.configs import param
from lerobot_ros.conventions.images import DEFAULT_JPEG_QUALITY, JPEG_QUALITY_RANGE
from lerobot_ros.sim.bridge import MODES
from lerobot_ros.sim.factory import ENV_KINDS
from lerobot_ros.sim.registry import EXPERTS


@dataclass(frozen=True)
class BridgeConfig:
    """sim_bridge_node's parameters. All read-only: each one shapes the simulator built at start-up."""

    env_type: str = param("metaworld", "simulator kind", choices=ENV_KINDS, name="env.type")
    env_task: str = param(
        "",
        "Meta-World task (-v3 name), SO-101 scene (pick, arm or an MJCF path), LIBERO suite, bi_so101 scene (table) "
        "or lekiwi scene (floor); '' = the env's default",
        name="env.task",
    )
    env_task_id: int = param(0, "task index within a LIBERO suite", min=0, name="env.task_id")
    mode: str = param(
        "lockstep", "lockstep: one env step per action (evaluation); realtime: steps at fps on a timer", choices=MODES
    )
    observation_height: int = param(480, "camera image height", unit="px", min=1, name="env.observation_height")
    observation_width: int = param(480, "camera image width", unit="px", min=1, name="env.observation_width")
    shadows: bool = param(False, "render shadows (costly on CPU rendering)")
    antialias: bool = param(True, "multisample anti-aliasing of camera images")
    fps: float = param(0.0, "control rate; 0 = the env's own (Meta-World's is fixed at 80)", unit="Hz", min=0.0)
    cameras: list[str] = param(
        ["front"],
        "MJCF cameras to render: so101 and lekiwi front, wrist; bi_so101 front, left_wrist, right_wrist; [none] for none",
    )
    camera_fps: float = param(
        0.0, "MuJoCo twins: render cameras at this rate when lower than fps; 0 = every step", unit="Hz", min=0.0
    )
    meshes: str = param(
        "simplified",
        "SO-101: draw simplified copies of the visual meshes (collision untouched) or the package's full meshes",
        choices=("simplified", "full"),
    )
    episode_length: int = param(
        0, "episode length limit; 0 = the env's own", unit="steps", min=0, name="env.episode_length"
    )
    episode_limit: str = param(
        "enforced",
        "enforced: at its length limit an episode ends and commands are refused until reset_episode; marked: the "
        "bridge keeps stepping and obeying like a real arm, episode_status only marks the limit (for LeRobot's "
        "CLIs, which run their own episodes; SO-101 twin)",
        choices=("enforced", "marked"),
    )
    reset_on_start: bool = param(True, "start episode 0 as soon as the bridge is up")
    seed: int = param(0, "seed of the first episode when reset_on_start; < 0 = unseeded")
    publish_clock: bool = param(True, "publish /clock with simulated time (for use_sim_time nodes)")
    jpeg_quality: int = param(
        DEFAULT_JPEG_QUALITY,
        "jpeg quality of <camera>/image_raw/compressed (encoded only while subscribed)",
        min=JPEG_QUALITY_RANGE[0],
        max=JPEG_QUALITY_RANGE[1],
    )


@dataclass(frozen=True)
class ExpertConfig:
    """All read-only: they choose the expert built at start-up."""

    expert: str = param("metaworld", "which scripted expert (lerobot_ros.sim.registry)", choices=tuple(EXPERTS))
    env_task: str = param("push-v3", "Meta-World task whose expert acts (expert metaworld)", name="env.task")
    scene: str = param("pick", "SO-101 scene the pick is scripted for (expert so101_pick)")
