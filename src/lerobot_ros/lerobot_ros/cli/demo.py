"""The main job on an embedded default, no hardware: Meta-World push-v3 (or the SO-101 twin) with its
scripted expert on ROS topics, N episodes recorded to rosbag2 by the recorder node, converted into a
LeRobotDataset, the expert scored by `lerobot-ros eval`, and a summary of where everything is.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lerobot_ros.cli.args import render_size


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--env", choices=("metaworld", "so101"), default="metaworld",
                   help="simulator: metaworld (push-v3, fast and reliable) or so101 (the MuJoCo twin, pick)")
    p.add_argument("--task", default="", help="Meta-World task (default push-v3) or SO-101 scene (default pick)")
    p.add_argument("--episodes", type=int, default=3, help="episodes to record (default 3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first recorded episode (default 0)")
    p.add_argument("--render", type=render_size(16), default=(96, 96), metavar="HxW", help="camera image size (default 96x96)")
    p.add_argument("--out", type=Path, default=Path("outputs/demo"), help="output folder (default outputs/demo; an earlier demo's is replaced)")
    p.add_argument("--eval-episodes", type=int, default=3, help="episodes for lerobot-ros eval (default 3)")
    p.add_argument("--no-eval", action="store_true", help="stop after converting the dataset")
    p.add_argument("--policy-path", default=None, metavar="DIR",
                   help="evaluate your LeRobot policy (pretrained_model folder) instead of the scripted expert")
    p.add_argument("--vcodec", default="libsvtav1", help="video codec for the dataset (default libsvtav1)")
    p.add_argument("--print-urdf", action="store_true",
                   help="print the SO-101 URDF with absolute mesh paths (rviz's robot_description) and exit")


def next_steps(out: Path) -> str:
    return "\n".join([
        "next steps (one flag away):",
        "  your policy in this simulator:    lerobot-ros demo --policy-path PATH/pretrained_model",
        "  the SO-101 twin instead:          lerobot-ros demo --env so101 --render 240x320",
        "  more episodes / bigger images:    lerobot-ros demo --episodes 20 --render 480x480",
        "  your SO-101 arm, teleoperated and recorded:",
        "    lerobot-ros launch so101_real port:=/dev/ttyACM0 teleop:=true leader_port:=/dev/ttyACM1 record:=true task:='pick the cube'",
        "  your policy on your arm:          lerobot-ros launch so101_real port:=/dev/ttyACM0 policy_path:=PATH",
        "  no arm at hand (emulated servos): lerobot-ros launch so101_virtual",
        f"  train on the demo dataset:        lerobot-train --dataset.repo_id=local/lerobot_ros_demo --dataset.root={out / 'dataset'} --policy.type=act",
    ])


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
        lines += [f"eval success     {rec['eval_pc_success']:g}% (lerobot-ros eval)",
                  f"eval_info.json   {rec['eval_info']}",
                  f"eval video       {rec['eval_video'] or '-'}"]
    else:
        lines.append(f"eval             {rec['eval_note'].splitlines()[0]}")
    timings = ", ".join(f"{k[:-2]} {v:g} s" for k, v in rec["timings_s"].items())
    lines += [f"time             {timings}", f"summary.json     {out / 'summary.json'}", "", next_steps(out)]
    print("\n".join(lines), flush=True)


def run(args: argparse.Namespace) -> int:
    if args.print_urdf:
        from lerobot_ros.demo.urdf import so101_urdf

        sys.stdout.write(so101_urdf())
        return 0
    from lerobot_ros.demo.driver import DemoError
    from lerobot_ros.demo.pipeline import DemoConfig, run_demo, summary_dict

    cfg = DemoConfig(env=args.env, task=args.task, episodes=args.episodes, seed=args.seed, height=args.render[0],
                     width=args.render[1], out=args.out, eval_episodes=args.eval_episodes, eval=not args.no_eval,
                     policy_path=args.policy_path, vcodec=args.vcodec)
    if args.policy_path:  # checked before minutes of recording, not when eval finally reads it
        from lerobot_ros.policy.loading import PolicyLoadError, read_policy_config

        try:
            read_policy_config(args.policy_path)
        except PolicyLoadError as exc:
            print(f"lerobot-ros demo: {exc}", file=sys.stderr)
            return 2
    try:
        res = run_demo(cfg, printer=lambda s: print(s, flush=True))
    except DemoError as exc:
        print(f"lerobot-ros demo: {exc}", file=sys.stderr)
        return 1
    print_summary(summary_dict(cfg, res), cfg.out)
    return 1 if res.failed else 0
