"""Evaluate a policy through ROS: seeded episodes on sim bridges in lockstep, scored like lerobot-eval.

Starts one sim bridge and one policy source per namespace (/sim_0, /sim_1 ...; --workers, by default
lerobot-eval's auto batch size), or attaches
to running ones (--attach /sim ...: env, task and render size are the bridge's; with --expert or
--policy.path eval starts that source beside the bridge, without them it uses the node that already
publishes NS/commands), runs --n-episodes episodes with seeds --seed, --seed + 1 ...,
stops each at success, done or the env's max steps (--task as lerobot-eval's --env.task: several tasks,
difficulty groups or suites run one after another), and writes OUTPUT/eval_info.json in lerobot-eval's
schema (per_episode, per_task, per_group, overall) plus videos of the first --videos episodes.
Node logs go to OUTPUT/logs/.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lerobot_ros.cli.args import render_size


def _ids(text: str) -> tuple[int, ...]:
    import argparse

    try:
        ids = tuple(int(v) for v in text.split(",") if v.strip())
        if not ids or min(ids) < 0:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected task ids such as 0 or 0,3,7, got {text!r}") from None
    return ids


def add_arguments(p) -> None:
    from lerobot_ros.sim.registry import SIMS

    defaults = ", ".join(f"{k.name}: {k.default_task}" for k in SIMS.values())
    p.add_argument(
        "--env", default=None, choices=tuple(SIMS), help="simulator (default metaworld; attached: the bridge's)"
    )
    p.add_argument(
        "--task",
        default=None,
        help="as lerobot-eval's --env.task: Meta-World tasks or difficulty groups (easy, medium, hard, very_hard), "
        f"SO-101 scenes or LIBERO suites, comma-separated; run one after another (default {defaults}; attached: the bridge's)",
    )
    p.add_argument(
        "--task-id",
        "--task-ids",
        dest="task_ids",
        type=_ids,
        default=None,
        help="LIBERO task ids to run of each suite, comma-separated (default: all, as lerobot-eval)",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--policy.path", "--policy-path", dest="policy_path", help="LeRobot pretrained_model folder (runs policy_node)"
    )
    src.add_argument("--expert", action="store_true", help="use the env's scripted expert (scripted_expert_node)")
    p.add_argument("--n-episodes", type=int, default=10, help="episodes to run (default 10)")
    p.add_argument(
        "--seed",
        type=int,
        default=1000,
        help="seed of the first episode; episode i uses seed + i (default 1000, as lerobot-eval)",
    )
    p.add_argument(
        "--workers",
        "--batch-size",
        dest="workers",
        type=int,
        default=0,
        help="bridges run in parallel, in namespaces /sim_0 ...; 0 (default): lerobot-eval's auto rule, "
        "floor(0.7 x CPU cores) capped by --n-episodes and 64; more than --n-episodes is capped",
    )
    p.add_argument(
        "--attach",
        nargs="+",
        default=[],
        metavar="NS",
        help="use the sim bridges already running in these namespaces (e.g. /sim from `lerobot-ros launch sim_metaworld`); "
        "--expert / --policy.path start that source beside them (--expert uses a scripted one already "
        "running there), else the running source is used",
    )
    p.add_argument(
        "--render",
        type=render_size(1),
        default=None,
        metavar="HxW",
        help="render size (default: the policy's image size, else 480x480)",
    )
    p.add_argument("--shadows", action="store_true", help="render shadows (slow on a CPU; off by default)")
    p.add_argument(
        "--max-episode-steps", type=int, default=0, help="cut episodes at this many steps (default: the env's own)"
    )
    p.add_argument("--videos", type=int, default=2, help="render videos of the first N episodes (default 2)")
    p.add_argument("--contract", default=None, help="contract for the policy node (default: the env's shipped one)")
    p.add_argument("--device", default="cpu", help="policy device: cpu, cuda, mps or auto (default cpu)")
    p.add_argument(
        "--output-dir", "-o", type=Path, default=Path("outputs/eval"), help="where eval_info.json, videos and logs go"
    )
    p.add_argument(
        "--save-dataset",
        dest="dataset_dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="also write the evaluated episodes as a LeRobotDataset in DIR (must not exist): the contract's "
        "features at the render size, one frame per step, converted from the episode bags by `lerobot-ros convert`",
    )
    p.add_argument(
        "--record",
        dest="record_dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="also keep every evaluated episode as a rosbag2 in DIR (new or empty), with eval_contract.yaml "
        "for `lerobot-ros convert DIR --contract DIR/eval_contract.yaml`",
    )
    p.add_argument("--profile", action="store_true", help="print where the time goes (start-up phases, episodes)")
    p.add_argument(
        "--startup-timeout",
        type=float,
        default=None,
        help="seconds to wait for the nodes to come up (default 180; with --attach 30 to find the bridges)",
    )


def run(args) -> int:
    from lerobot_ros.eval.runner import EvalConfig, EvalSetupError, Evaluation
    from lerobot_ros.policy.loading import PolicyLoadError, read_policy_config

    if args.policy_path:  # a missing or malformed config.json: one line before any process starts
        try:
            read_policy_config(args.policy_path)
        except PolicyLoadError as exc:
            print(f"lerobot-ros eval: {exc}", file=sys.stderr)
            return 1

    cfg = EvalConfig(
        env=args.env,
        task=args.task,
        task_ids=args.task_ids,
        profile=args.profile,
        policy_path=args.policy_path,
        expert=args.expert,
        n_episodes=args.n_episodes,
        start_seed=args.seed,
        workers=args.workers,
        attach=list(args.attach),
        render=args.render,
        shadows=args.shadows,
        max_episode_steps=args.max_episode_steps,
        videos=args.videos,
        contract=args.contract,
        device=args.device,
        output_dir=args.output_dir,
        startup_timeout_s=args.startup_timeout,
        record_dir=args.record_dir,
        dataset_dir=args.dataset_dir,
    )
    try:
        Evaluation(cfg).run()
    except EvalSetupError as exc:
        print(f"lerobot-ros eval: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"lerobot-ros eval: {exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}", file=sys.stderr)
        return 1
    return 0
