"""Evaluate a policy through ROS: seeded episodes on sim bridges in lockstep, scored like lerobot-eval.

Starts one sim bridge and one policy source per namespace (/sim_0, /sim_1 ...; --eval.batch_size, by default
lerobot-eval's auto batch size), or attaches to running ones (--attach /sim ...: env, task and render size
are the bridge's; with --expert or --policy.path eval starts that source beside the bridge, without them it
uses the node that already publishes NS/commands), runs --eval.n_episodes episodes with seeds --seed,
--seed + 1 ..., stops each at success, done or the env's max steps (--env.task as lerobot-eval's: several
tasks, difficulty groups or suites run one after another), and writes OUTPUT_DIR/eval_info.json in
lerobot-eval's schema (per_episode, per_task, per_group, overall) plus videos of the first --videos
episodes. Node logs go to OUTPUT_DIR/logs/. The work is `lerobot_ros.eval.evaluation.Evaluation`.

  lerobot-ros eval --policy.path outputs/train/checkpoints/last/pretrained_model --env.type metaworld \\
      --env.task push-v3 --eval.n_episodes 10 --output_dir outputs/eval
"""

from __future__ import annotations

from lerobot_ros.configs.cli import add_arguments as add_config_arguments
from lerobot_ros.configs.cli import from_args
from lerobot_ros.eval.config import EvalConfig

#: settings that are the library's (tests, the demo), not flags
INTERNAL = ("antialias", "policy_seed", "stall_timeout_s", "quiet")


def add_arguments(p) -> None:
    add_config_arguments(p, EvalConfig, exclude=INTERNAL)


def run(args) -> int:
    from lerobot_ros.eval.evaluation import Evaluation
    from lerobot_ros.policy.loading import read_policy_config

    cfg = from_args(EvalConfig, args)
    if cfg.policy_path:  # a missing or malformed config.json: one line before any process starts
        read_policy_config(cfg.policy_path)
    Evaluation(cfg).run()
    return 0
