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

from lerobot_ros.configs.cli import add_arguments as add_config_arguments
from lerobot_ros.configs.cli import from_args
from lerobot_ros.demo.config import DemoConfig


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p, DemoConfig)
    p.add_argument(
        "--print_urdf",
        nargs="?",
        const="so101",
        default=None,
        choices=("so101", "bi_so101", "lekiwi"),
        metavar="ROBOT",
        help="print a twin's URDF with absolute mesh paths (rviz's robot_description) and exit: so101 (default), "
        "bi_so101 (the pair, left_/right_ prefixes) or lekiwi",
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
    """The commands printed under "next steps"; each works as printed on an offline install, and says about how
    long it takes on a 2-core CPU like the one CI runs on (ACT trains at ~1.5 s per step of batch 8 there)."""
    from lerobot_ros.demo.train import lerobot_train_command

    steps = []
    if checkpoint is None:
        steps.append(
            NextStep(
                "train ACT briefly on 20 episodes and evaluate it (~10 min on a 2-core CPU; a policy that succeeds "
                "needs ~2000 steps: ~1 h there, minutes on a GPU):",
                ("lerobot-ros", "demo", "--dataset.num_episodes", "20", "--steps", "200"),
            )
        )
    else:
        steps.append(
            NextStep("the trained policy, evaluated again:", ("lerobot-ros", "demo", "--policy.path", str(checkpoint)))
        )
    steps += [
        NextStep(
            "train on this dataset yourself (2000 steps: ~50 min on a 2-core CPU):",
            tuple(lerobot_train_command(out / "dataset", "local/lerobot_ros_demo", out.parent / "train_act", 2000)),
        ),
        NextStep(
            "the SO-101 twin instead (~5 min on a 2-core CPU):",
            (
                "lerobot-ros",
                "demo",
                "--env.type",
                "so101",
                "--env.observation_height",
                "240",
                "--env.observation_width",
                "320",
            ),
        ),
        NextStep(
            "more episodes / bigger images (~10 min on a 2-core CPU):",
            (
                "lerobot-ros",
                "demo",
                "--dataset.num_episodes",
                "20",
                "--env.observation_height",
                "480",
                "--env.observation_width",
                "480",
            ),
        ),
        NextStep("no arm at hand (emulated servos):", ("lerobot-ros", "launch", "so101_virtual")),
        NextStep(
            "your SO-101 arm, teleoperated and recorded:",
            (
                "lerobot-ros",
                "launch",
                "so101_real",
                "robot.port:=/dev/ttyACM0",
                "teleop:=true",
                "teleop.port:=/dev/ttyACM1",
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
                "robot.port:=/dev/ttyACM0",
                f"policy.path:={checkpoint or 'PATH/pretrained_model'}",
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
        from lerobot_ros.sim.robot_urdfs import robot_urdf

        sys.stdout.write(robot_urdf(args.print_urdf))
        return 0
    from lerobot_ros.conventions.extras import require
    from lerobot_ros.demo.config import ENV_MODULES

    cfg = from_args(DemoConfig, args)
    require(ENV_MODULES[cfg.env], "demo")
    from lerobot_ros.demo.pipeline import run_demo, summary_dict

    res = run_demo(cfg, printer=lambda s: print(s, flush=True))
    print_summary(summary_dict(cfg, res), cfg.out)
    return 1 if res.failed else 0
