"""Settings of the demo (`lerobot-ros demo`), declared once, with the names LeRobot's CLIs use for the same
things: `--env.type`, `--env.task`, `--dataset.num_episodes`, `--eval.n_episodes`, `--policy.path`,
`--output_dir`, `--steps`, `--batch_size`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lerobot_ros.configs import param
from lerobot_ros.dataset.config import DEFAULT_VCODEC

#: env -> launch file, shipped contract, camera topic (relative to /sim), expert task
ENVS = {
    "metaworld": {"launch": "sim_metaworld", "contract": "metaworld", "camera": "corner2/image_raw", "task": "push-v3"},
    "so101": {"launch": "sim_so101", "contract": "so101_sim", "camera": "front/image_raw", "task": "pick"},
}
#: env -> the modules the demo needs (the sim extra installs them), checked before anything starts
ENV_MODULES = {
    "metaworld": ("lerobot", "mujoco", "metaworld"),
    "so101": ("lerobot", "mujoco", "lerobot_env_so101"),
}
DEFAULT_SIZE = 96  # px: the demo's camera images when no policy asks for another size


@dataclass(frozen=True)
class DemoConfig:
    """The demo: record -> convert -> eval (and optionally train -> eval) on an embedded simulator."""

    env: str = param(
        "metaworld",
        "simulator: metaworld (push-v3, fast and reliable) or so101 (the MuJoCo twin, pick)",
        choices=tuple(ENVS),
        name="env.type",
    )
    task: str = param("", "Meta-World task (default push-v3) or SO-101 scene (default pick)", name="env.task")
    episodes: int = param(3, "episodes to record", min=1, name="dataset.num_episodes")
    seed: int = param(0, "seed of the first recorded episode")
    height: int = param(
        0,
        f"camera image height (0: {DEFAULT_SIZE}, or with --policy.path the size the policy was trained on)",
        unit="px",
        min=0,
        name="env.observation_height",
    )
    width: int = param(
        0,
        f"camera image width (0: {DEFAULT_SIZE}, or with --policy.path the size the policy was trained on)",
        unit="px",
        min=0,
        name="env.observation_width",
    )
    output_dir: str = param("outputs/demo", "output folder (an earlier demo's is replaced)")
    eval_episodes: int = param(3, "episodes for lerobot-ros eval", min=1, name="eval.n_episodes")
    eval: bool = param(True, "score the expert (or policy) with lerobot-ros eval after recording")
    policy_path: str | None = param(
        None,
        "evaluate your LeRobot policy (pretrained_model folder) instead of the scripted expert",
        name="policy.path",
    )
    vcodec: str = param(DEFAULT_VCODEC, "video codec of the dataset", name="dataset.rgb_encoder.vcodec")
    startup_timeout_s: float = param(240.0, "how long the simulator may take to come up", unit="s", min=0.0)
    episode_timeout_s: float = param(240.0, "how long one recorded episode may take", unit="s", min=0.0)
    train_steps: int = param(
        0,
        "after converting, train ACT on the dataset for this many steps with lerobot-train (offline: random backbone) "
        "and evaluate the checkpoint through policy_node on the same simulator (0: no training)",
        min=0,
        name="steps",
    )
    train_batch_size: int = param(8, "lerobot-train batch size with --steps", min=1, name="batch_size")

    @property
    def out(self) -> Path:
        return Path(self.output_dir)

    @property
    def n_steps(self) -> int:
        """Steps the demo prints as k/n."""
        return 6 if self.train_steps else 4

    @property
    def spec(self) -> dict:
        return ENVS[self.env]

    @property
    def sim_task(self) -> str:
        return self.task or self.spec["task"]
