"""Settings of an evaluation (`lerobot-ros eval`), declared once, with lerobot-eval's names: `--policy.path`,
`--env.type`, `--env.task`, `--env.task_ids`, `--eval.n_episodes`, `--eval.batch_size`, `--seed`,
`--output_dir`, `--policy.device`.
"""

from __future__ import annotations

from dataclasses import dataclass

from lerobot_ros.configs import param


@dataclass(frozen=True)
class EvalConfig:
    """What to evaluate, where and how; `plan.plan_eval` checks it and resolves every default."""

    env: str | None = param(None, "simulator: metaworld, so101 or libero (attached: the bridge's)", name="env.type")
    task: str | None = param(
        None,
        "as lerobot-eval's --env.task: Meta-World tasks or difficulty groups (easy, medium, hard, very_hard), SO-101 "
        "scenes or LIBERO suites, comma-separated, run one after another (default: the env's; attached: the bridge's)",
        name="env.task",
    )
    task_ids: list[int] | None = param(
        None, "LIBERO task ids to run of each suite, e.g. 0,3 (default: all, as lerobot-eval)", name="env.task_ids"
    )
    policy_path: str | None = param(
        None, "LeRobot pretrained_model folder, run by policy_node (or --expert)", name="policy.path"
    )
    expert: bool = param(False, "use the env's scripted expert (scripted_expert_node) instead of a policy")
    n_episodes: int = param(10, "episodes per task", min=1, name="eval.n_episodes")
    start_seed: int = param(1000, "seed of the first episode; episode i uses seed + i (as lerobot-eval)", name="seed")
    workers: int = param(
        0,
        "bridges run in parallel, in namespaces /sim_0 ...; 0: lerobot-eval's auto rule, floor(0.7 x CPU cores) "
        "capped by eval.n_episodes and 64",
        min=0,
        name="eval.batch_size",
    )
    attach: list[str] = param(
        [],
        "use the sim bridges already running in these namespaces (e.g. /sim from `lerobot-ros launch "
        "sim_metaworld`); --expert / --policy.path start that source beside them, else the running source is used",
    )
    observation_height: int = param(
        0, "camera image height (0: the policy's image size, else 480)", unit="px", min=0, name="env.observation_height"
    )
    observation_width: int = param(
        0, "camera image width (0: the policy's image size, else 480)", unit="px", min=0, name="env.observation_width"
    )
    shadows: bool = param(False, "render shadows (slow on a CPU)")
    antialias: bool = param(True, "multisample anti-aliasing of camera images")
    max_episode_steps: int = param(
        0, "cut episodes at this many steps (0: the env's own)", unit="steps", min=0, name="env.episode_length"
    )
    videos: int = param(2, "render videos of the first N episodes of each task", min=0)
    output_dir: str = param("outputs/eval", "where eval_info.json, videos and logs go")
    contract: str | None = param(None, "contract for the policy node (default: the env's shipped one)")
    device: str = param("cpu", "policy device: cpu, cuda, mps or auto", name="policy.device")
    policy_seed: int | None = param(None, "torch seed of the policy node (default: seed, as lerobot-eval)")
    startup_timeout_s: float | None = param(
        None, "seconds to wait for the nodes to come up (default 180; with attach, 30 to find the bridges)", unit="s"
    )
    stall_timeout_s: float = param(120.0, "an episode whose bridge stops answering this long fails", unit="s", min=0.0)
    profile: bool = param(False, "print where the time goes (start-up phases, episodes)")
    quiet: bool = param(False, "print only the result")
    record_dir: str | None = param(
        None,
        "also keep every evaluated episode as a rosbag2 in this (new or empty) folder, with eval_contract.yaml for "
        "`lerobot-ros convert DIR --contract DIR/eval_contract.yaml`",
    )
    dataset_dir: str | None = param(
        None,
        "also write the evaluated episodes as a LeRobotDataset in this (new) folder: the contract's features at the "
        "render size, one frame per step",
        name="dataset.root",
    )

    @property
    def render(self) -> tuple[int, int] | None:
        """(height, width) asked for; None: the policy's image size, else 480x480."""
        if self.observation_height or self.observation_width:
            return (self.observation_height or 480, self.observation_width or 480)
        return None
