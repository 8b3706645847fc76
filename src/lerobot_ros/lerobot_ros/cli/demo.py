"""The main job on an embedded default, no hardware: Meta-World push-v3 (or the SO-101 twin) with its
scripted expert on ROS topics, N episodes recorded to rosbag2 by the recorder node, converted into a
LeRobotDataset, the expert scored by `lerobot-ros eval`, and a summary of where everything is.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from lerobot_ros.cli.args import render_size


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--env",
        choices=("metaworld", "so101"),
        default="metaworld",
        help="simulator: metaworld (push-v3, fast and reliable) or so101 (the MuJoCo twin, pick)",
    )
    p.add_argument("--task", default="", help="Meta-World task (default push-v3) or SO-101 scene (default pick)")
    p.add_argument("--episodes", type=int, default=3, help="episodes to record (default 3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first recorded episode (default 0)")
    p.add_argument(
        "--render",
        type=render_size(16),
        default=None,
        metavar="HxW",
        help="camera image size (default 96x96; with --policy-path, the size the policy was trained on)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("outputs/demo"),
        help="output folder (default outputs/demo; an earlier demo's is replaced)",
    )
    p.add_argument("--eval-episodes", type=int, default=3, help="episodes for lerobot-ros eval (default 3)")
    p.add_argument("--no-eval", action="store_true", help="stop after converting the dataset")
    p.add_argument(
        "--policy-path",
        default=None,
        metavar="DIR",
        help="evaluate your LeRobot policy (pretrained_model folder) instead of the scripted expert",
    )
    p.add_argument("--vcodec", default="libsvtav1", help="video codec for the dataset (default libsvtav1)")
    p.add_argument(
        "--train",
        type=int,
        default=0,
        metavar="STEPS",
        help="after converting, train ACT on the dataset for STEPS steps with lerobot-train (offline: random "
        "backbone) and evaluate the checkpoint through policy_node on the same simulator",
    )
    p.add_argument("--train-batch-size", type=int, default=8, help="lerobot-train batch size with --train (default 8)")
    p.add_argument(
        "--print-urdf",
        action="store_true",
        help="print the SO-101 URDF with absolute mesh paths (rviz's robot_description) and exit",
    )


@dataclass(frozen=True)
class NextStep:
    """One command the demo suggests; `hardware` ones need an arm plugged in (tests only parse them)."""

    what: str
    argv: tuple[str, ...]
    hardware: bool = False

    @property
    def command(self) -> str:
        return shlex.join(self.argv)


def next_step_list(out: Path, checkpoint: Path | None = None) -> list[NextStep]:
    """The commands printed under "next steps"; each works as printed on an offline install."""
    from lerobot_ros.demo.train import lerobot_train_command

    steps = []
    if checkpoint is None:
        steps.append(
            NextStep(
                "train ACT on 20 episodes and evaluate it:",
                ("lerobot-ros", "demo", "--episodes", "20", "--train", "2000"),
            )
        )
    else:
        steps.append(
            NextStep("the trained policy, evaluated again:", ("lerobot-ros", "demo", "--policy-path", str(checkpoint)))
        )
    steps += [
        NextStep(
            "train on this dataset yourself:",
            tuple(lerobot_train_command(out / "dataset", "local/lerobot_ros_demo", out.parent / "train_act", 2000)),
        ),
        NextStep("the SO-101 twin instead:", ("lerobot-ros", "demo", "--env", "so101", "--render", "240x320")),
        NextStep("more episodes / bigger images:", ("lerobot-ros", "demo", "--episodes", "20", "--render", "480x480")),
        NextStep("no arm at hand (emulated servos):", ("lerobot-ros", "launch", "so101_virtual")),
        NextStep(
            "your SO-101 arm, teleoperated and recorded:",
            (
                "lerobot-ros",
                "launch",
                "so101_real",
                "port:=/dev/ttyACM0",
                "teleop:=true",
                "leader_port:=/dev/ttyACM1",
                "record:=true",
                "task:=pick the cube",
            ),
            hardware=True,
        ),
        NextStep(
            "a policy on your arm:",
            (
                "lerobot-ros",
                "launch",
                "so101_real",
                "port:=/dev/ttyACM0",
                f"policy_path:={checkpoint or 'PATH/pretrained_model'}",
            ),
            hardware=True,
        ),
    ]
    return steps


def next_steps(out: Path, checkpoint: Path | None = None) -> str:
    lines = ["next steps:"]
    for step in next_step_list(out, checkpoint):
        lines += [f"  {step.what}", f"    {step.command}"]
    return "\n".join(lines)


def print_summary(summary: dict, out: Path) -> None:
    rec = summary
    lines = [
        "",
        "== lerobot-ros demo: summary ==",
        f"simulator        {rec['env']} {rec['task']} (scripted expert over ROS topics)",
        f"recorded         {rec['recorded_episodes']} episodes, {rec['recorded_successes']} successful ({rec['record_success_rate']:g}%)",
        f"bags (rosbag2)   {rec['bags']}",
        f"dataset          {rec['dataset']}  ({rec['dataset_episodes']} episodes, {rec['dataset_frames']} frames; LeRobotDataset v3)",
        f"dataset video    {rec['video'] or '-'}",
    ]
    if rec["eval_info"]:
        lines += [
            f"eval success     {rec['eval_pc_success']:g}% (lerobot-ros eval)",
            f"eval_info.json   {rec['eval_info']}",
            f"eval video       {rec['eval_video'] or '-'}",
        ]
    else:
        lines.append(f"eval             {rec['eval_note'].splitlines()[0]}")
    checkpoint = None
    if rec.get("train"):
        tr = rec["train"]
        checkpoint = Path(tr["checkpoint"])
        loss = (
            f"loss {tr['first_loss']:.3f} -> {tr['final_loss']:.3f}"
            if tr["final_loss"] is not None
            else "loss not logged"
        )
        lines += [
            f"trained ACT      {tr['steps']} steps in {tr['seconds']:g} s, {loss} (random backbone: offline)",
            f"checkpoint       {checkpoint}",
        ]
        if rec["trained_eval_info"]:
            lines.append(
                f"trained success  {rec['trained_eval_pc_success']:g}% (lerobot-ros eval through policy_node; "
                f"few steps and episodes train little)"
            )
        else:
            lines.append(f"trained eval     {(rec['trained_eval_note'] or '-').splitlines()[0]}")
    elif rec.get("train_note"):
        lines.append(f"train            {rec['train_note'].splitlines()[0]}")
    timings = ", ".join(f"{k[:-2]} {v:g} s" for k, v in rec["timings_s"].items())
    lines += [
        f"time             {timings}",
        f"summary.json     {out / 'summary.json'}",
        "",
        next_steps(out, checkpoint),
    ]
    print("\n".join(lines), flush=True)


def run(args: argparse.Namespace) -> int:
    if args.print_urdf:
        from lerobot_ros.sim.so101_urdf import so101_urdf

        sys.stdout.write(so101_urdf())
        return 0
    from lerobot_ros.demo.driver import DemoError
    from lerobot_ros.demo.pipeline import DemoConfig, run_demo, summary_dict

    if args.train < 0 or args.train_batch_size < 1:
        print("lerobot-ros demo: --train takes a number of steps >= 1 and --train-batch-size >= 1", file=sys.stderr)
        return 2
    render = args.render
    if args.policy_path:  # checked before minutes of recording, not when eval finally reads it
        from lerobot_ros.policy.loading import PolicyLoadError, read_policy_config

        try:
            read_policy_config(args.policy_path)
        except PolicyLoadError as exc:
            print(f"lerobot-ros demo: {exc}", file=sys.stderr)
            return 2
        if render is None:  # render what the policy was trained on (a demo checkpoint: the demo's own size)
            from lerobot_ros.eval.plan import EvalSetupError, policy_image_shapes

            try:
                sizes = set(policy_image_shapes(args.policy_path).values())
            except EvalSetupError as exc:
                print(f"lerobot-ros demo: {exc}", file=sys.stderr)
                return 2
            render = sizes.pop() if len(sizes) == 1 else None
    render = render or (96, 96)
    cfg = DemoConfig(
        env=args.env,
        task=args.task,
        episodes=args.episodes,
        seed=args.seed,
        height=render[0],
        width=render[1],
        out=args.out,
        eval_episodes=args.eval_episodes,
        eval=not args.no_eval,
        policy_path=args.policy_path,
        vcodec=args.vcodec,
        train_steps=args.train,
        train_batch_size=args.train_batch_size,
    )
    try:
        res = run_demo(cfg, printer=lambda s: print(s, flush=True))
    except DemoError as exc:
        print(f"lerobot-ros demo: {exc}", file=sys.stderr)
        return 1
    print_summary(summary_dict(cfg, res), cfg.out)
    return 1 if res.failed else 0
