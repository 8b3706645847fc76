"""Benchmark: `lerobot-ros eval --policy.path` against `lerobot-eval --policy.path`, both as whole processes,
the way a user runs them, in the same run, with the same small saved ACT on Meta-World.

Both sides render the same: 64x64 without shadows by default (`--render`, `--shadows`). lerobot-eval 0.6.1
has no render-size option for Meta-World (its env always renders 480x480 with shadows, ~1 step/s on this
2-core machine: the issue's 10-episode run took over an hour), so its command runs unchanged with
bench/lerobot_eval_site/ on PYTHONPATH: a sitecustomize that makes LeRobot's MetaworldEnv render through
the bridge's own `configure_metaworld_render` (see that file). The ACT is random, saved to disk, built for
that image size (the parity test's checkpoint); it never succeeds, so every episode runs to its cut: 100
steps by default on both sides (`--max-steps`; 0: the env's 500), the same cut lerobot-ros eval's
`--env.episode_length` makes (lerobot-eval's through the same sitecustomize).

Default: push-v3, 4 episodes of 100 steps (seeds 1000..), the auto parallelism of both sides (lerobot-eval's
batch_size 0 rule; `lerobot-ros eval --eval.batch_size 0` follows it: 1 on 2 cores), so that the default run ends
in minutes here. The issue's full run: `--episodes 10 --workers 0,2` (auto and 2). Times are from the
command's start to its eval_info.json being written; the first episode's end and the steady state
(episodes after the first) come from the mtimes of the episode videos both write (lerobot-eval renders
its first 10 episodes; the ROS side is asked for as many). Per-episode results (sum_reward, success) of
both sides are compared. The ROS side gets `--startup_timeout_s 900`: on a loaded machine its policy node's
imports took longer than the default 180 s (lerobot-eval has no such limit; the time still counts).

Last line: one JSON object; figure = lerobot-eval wall / lerobot-ros eval wall at the first parallelism
given (goal >= 0.9; moonshot 1.0). Also per run: steady-state episodes/min ratio (goal >= 1.0),
first-episode times, parity, and the load average (other processes on the machine slow both sides).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 80))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MUJOCO_GL", "egl")

GOAL = 0.9
STEADY_GOAL = 1.0
BIN = Path(sys.executable).parent


def timed(argv: list[str], out: Path, log: Path, env: dict | None = None) -> tuple[float, float]:
    """Run a command; (seconds from its start until its eval_info.json was written, its start time)."""
    start = time.time()
    with open(log, "wb") as f:
        code = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}).returncode
    info = out / "eval_info.json"
    if code != 0 or not info.is_file():
        tail = log.read_text(errors="replace").strip().splitlines()[-5:]
        raise SystemExit(f"bench eval: {argv[0]} failed (exit {code}): " + " | ".join(tail) + f" (log: {log})")
    return info.stat().st_mtime - start, start


def episode_ends(videos: Path, start: float) -> list[float]:
    """Seconds from the command's start until each episode video was written, by episode index."""
    files = sorted(videos.rglob("eval_episode_*.mp4"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    return [p.stat().st_mtime - start for p in files]


def side(label: str, argv: list[str], out: Path, n: int, env: dict | None = None) -> dict:
    wall, start = timed(argv, out, out.parent / f"{out.name}.log", env)
    info = json.loads((out / "eval_info.json").read_text())
    ends = episode_ends(out / "videos", start)
    steady = 60 * (len(ends) - 1) / (ends[-1] - ends[0]) if len(ends) > 1 and ends[-1] > ends[0] else None
    metrics = info["per_task"][0]["metrics"]
    return {
        "side": label,
        "load": round(os.getloadavg()[0], 1),
        "wall_s": round(wall, 2),
        "episodes_per_min": round(60 * n / wall, 2),
        "first_episode_s": round(ends[0], 2) if ends else None,
        "steady_episodes_per_min": None if steady is None else round(steady, 2),
        "sum_rewards": metrics["sum_rewards"],
        "successes": metrics["successes"],
    }


SITE = Path(__file__).resolve().parent / "lerobot_eval_site"


def one(policy: Path, task: str, n: int, workers: int, out: Path, size: int, shadows: bool, max_steps: int) -> dict:
    env = {
        "LEROBOT_ROS_BENCH_RENDER": f"{size}x{size}",
        "LEROBOT_ROS_BENCH_SHADOWS": "1" if shadows else "0",
        "LEROBOT_ROS_BENCH_MAX_STEPS": str(max_steps),
        "PYTHONPATH": os.pathsep.join(p for p in (str(SITE), os.environ.get("PYTHONPATH", "")) if p),
    }
    ref = side(
        "lerobot-eval",
        [
            str(BIN / "lerobot-eval"),
            f"--policy.path={policy}",
            "--env.type=metaworld",
            f"--env.task={task}",
            f"--eval.n_episodes={n}",
            f"--eval.batch_size={workers}",
            "--policy.device=cpu",
            "--seed=1000",
            f"--output_dir={out / f'lerobot_{workers}'}",
        ],
        out / f"lerobot_{workers}",
        n,
        env,
    )
    ros = side(
        "lerobot-ros eval",
        [
            str(BIN / "lerobot-ros"),
            "eval",
            "--policy.path",
            str(policy),
            "--env.type",
            "metaworld",
            "--env.task",
            task,
            "--eval.n_episodes",
            str(n),
            "--eval.batch_size",
            str(workers),
            "--env.observation_height",
            str(size),
            "--env.observation_width",
            str(size),
            f"--shadows={'true' if shadows else 'false'}",
            "--env.episode_length",
            str(max_steps),
            "--startup_timeout_s",
            "900",
            "--videos",
            str(min(n, 10)),
            "--seed",
            "1000",
            "--output_dir",
            str(out / f"ros_{workers}"),
        ],
        out / f"ros_{workers}",
        n,
    )
    steady = (
        ros["steady_episodes_per_min"] / ref["steady_episodes_per_min"]
        if ros["steady_episodes_per_min"] and ref["steady_episodes_per_min"]
        else None
    )
    return {
        "workers": workers or "auto",
        "lerobot": ref,
        "ros": ros,
        "figure": round(ref["wall_s"] / ros["wall_s"], 3),
        "steady_ratio": None if steady is None else round(steady, 3),
        "parity": ref["sum_rewards"] == ros["sum_rewards"] and ref["successes"] == ros["successes"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="push-v3")
    ap.add_argument("--episodes", type=int, default=4, help="episodes per run (default 4; the issue's full run: 10)")
    ap.add_argument(
        "--workers",
        default="0",
        help="parallelism of both sides, comma-separated (0: auto, the default; the issue's full run: 0,2)",
    )
    ap.add_argument("--render", type=int, default=64, help="image size of both sides and of the ACT (default 64)")
    ap.add_argument(
        "--max-steps",
        type=int,
        default=100,
        help="cut every episode at this many steps on both sides (default 100; 0: the env's 500)",
    )
    ap.add_argument(
        "--shadows", action="store_true", help="render shadows on both sides (lerobot-eval's own look; slow on a CPU)"
    )
    args = ap.parse_args()
    from lerobot.configs.default import EvalConfig as LeRobotEvalConfig

    from lerobot_ros.testing.policies import metaworld_act

    runs, load0 = [], os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench_eval_") as tmp:
        out = Path(tmp)
        policy = metaworld_act(out / "act", args.render)
        for w in (int(v) for v in args.workers.split(",")):
            r = one(policy, args.task, args.episodes, w, out, args.render, args.shadows, args.max_steps)
            r["batch_size"] = LeRobotEvalConfig(n_episodes=args.episodes, batch_size=w).batch_size
            runs.append(r)

    print(
        f"Meta-World {args.task}, random ACT ({args.render}x{args.render}, {'shadows' if args.shadows else 'no shadows'}), "
        f"{args.episodes} episodes of {args.max_steps or 500} steps at most, seeds 1000.., {os.cpu_count()} CPU cores, load average {load0:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end"
    )
    print(f"{'workers':>8s} {'side':18s} {'wall s':>8s} {'ep/min':>7s} {'1st ep s':>9s} {'steady ep/min':>14s}")
    for r in runs:
        for s in (r["lerobot"], r["ros"]):
            print(
                f"{str(r['workers']) + ' (' + str(r['batch_size']) + ')':>8s} {s['side']:18s} {s['wall_s']:8.1f} "
                f"{s['episodes_per_min']:7.2f} {s['first_episode_s'] or float('nan'):9.1f} "
                f"{s['steady_episodes_per_min'] or float('nan'):14.2f}"
            )
        print(
            f"{'':8s} lerobot-eval wall / lerobot-ros wall {r['figure']:.3f}, steady-state ratio "
            f"{r['steady_ratio'] if r['steady_ratio'] is not None else 'n/a'}, per-episode results equal: {r['parity']}"
        )
    figure = runs[0]["figure"]
    print(
        json.dumps(
            {
                "bench": "eval",
                "figure": figure,
                "goal": GOAL,
                "goal_op": ">=",
                "meets_goal": bool(figure >= GOAL),
                "steady_goal": STEADY_GOAL,
                "load_start": round(load0, 1),
                "load_end": round(os.getloadavg()[0], 1),
                "render": args.render,
                "episodes": args.episodes,
                "max_steps": args.max_steps,
                "parity": all(r["parity"] for r in runs),
                "runs": runs,
            }
        )
    )


if __name__ == "__main__":
    main()
