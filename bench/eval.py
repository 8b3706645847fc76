"""Benchmark: `lerobot-ros eval --policy.path` against `lerobot-eval --policy.path`, both as whole processes,
the way a user runs them, in the same run, with the same small saved ACT on Meta-World.

Default: a random ACT (saved to disk, 480x480 image input: what lerobot-eval's Meta-World env renders,
with shadows, so the ROS side renders the same with --shadows) on push-v3, 10 episodes (seeds 1000..),
once with the auto parallelism of both (lerobot-eval's batch_size 0 rule; `lerobot-ros eval --workers 0`
follows it) and once with 2. Times are from the command's start to its eval_info.json being written; the
first episode's end and the steady state (episodes after the first) come from the mtimes of the episode
videos both write (lerobot-eval renders its first 10 episodes; the ROS side is asked for as many).
Per-episode results (sum_reward, success) of both sides are compared.

Last line: one JSON object; figure = lerobot-eval wall / lerobot-ros eval wall at the auto parallelism
(goal >= 0.9; moonshot 1.0). Also per run: steady-state episodes/min ratio (goal >= 1.0), first-episode
times, parity. CPU heavy (500 steps per episode, 480x480 with shadows on a CPU): run it with `nice` and
expect tens of minutes on a 2-core machine; `--episodes 2 --workers 1` is a quick check.
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
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

GOAL = 0.9
STEADY_GOAL = 1.0
BIN = Path(sys.executable).parent


def timed(argv: list[str], out: Path, log: Path) -> tuple[float, float]:
    """Run a command; (seconds from its start until its eval_info.json was written, its start time)."""
    start = time.time()
    with open(log, "wb") as f:
        code = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT).returncode
    info = out / "eval_info.json"
    if code != 0 or not info.is_file():
        tail = log.read_text(errors="replace").strip().splitlines()[-5:]
        raise SystemExit(f"bench eval: {argv[0]} failed (exit {code}): " + " | ".join(tail) + f" (log: {log})")
    return info.stat().st_mtime - start, start


def episode_ends(videos: Path, start: float) -> list[float]:
    """Seconds from the command's start until each episode video was written, by episode index."""
    files = sorted(videos.rglob("eval_episode_*.mp4"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    return [p.stat().st_mtime - start for p in files]


def side(label: str, argv: list[str], out: Path, n: int) -> dict:
    wall, start = timed(argv, out, out.parent / f"{out.name}.log")
    info = json.loads((out / "eval_info.json").read_text())
    ends = episode_ends(out / "videos", start)
    steady = 60 * (len(ends) - 1) / (ends[-1] - ends[0]) if len(ends) > 1 and ends[-1] > ends[0] else None
    metrics = info["per_task"][0]["metrics"]
    return {"side": label, "wall_s": round(wall, 2), "episodes_per_min": round(60 * n / wall, 2),
            "first_episode_s": round(ends[0], 2) if ends else None,
            "steady_episodes_per_min": None if steady is None else round(steady, 2),
            "sum_rewards": metrics["sum_rewards"], "successes": metrics["successes"]}


def one(policy: Path, task: str, n: int, workers: int, out: Path) -> dict:
    ref = side("lerobot-eval", [
        str(BIN / "lerobot-eval"), f"--policy.path={policy}", "--env.type=metaworld", f"--env.task={task}",
        f"--eval.n_episodes={n}", f"--eval.batch_size={workers}", "--policy.device=cpu", "--seed=1000",
        f"--output_dir={out / f'lerobot_{workers}'}",
    ], out / f"lerobot_{workers}", n)
    ros = side("lerobot-ros eval", [
        str(BIN / "lerobot-ros"), "eval", "--policy.path", str(policy), "--task", task, "--n-episodes", str(n),
        "--workers", str(workers), "--shadows", "--videos", str(min(n, 10)), "--seed", "1000",
        "-o", str(out / f"ros_{workers}"),
    ], out / f"ros_{workers}", n)
    steady = (ros["steady_episodes_per_min"] / ref["steady_episodes_per_min"]
              if ros["steady_episodes_per_min"] and ref["steady_episodes_per_min"] else None)
    return {
        "workers": workers or "auto", "lerobot": ref, "ros": ros,
        "figure": round(ref["wall_s"] / ros["wall_s"], 3),
        "steady_ratio": None if steady is None else round(steady, 3),
        "parity": ref["sum_rewards"] == ros["sum_rewards"] and ref["successes"] == ros["successes"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="push-v3")
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--workers", default="0,2", help="parallelism of both sides, comma-separated (0: auto)")
    args = ap.parse_args()
    from lerobot.configs.default import EvalConfig as LeRobotEvalConfig

    from test_eval_parity import metaworld_act

    runs = []
    with tempfile.TemporaryDirectory(prefix="bench_eval_") as tmp:
        out = Path(tmp)
        policy = metaworld_act(out / "act", 480)  # lerobot-eval's Meta-World renders 480x480
        for w in (int(v) for v in args.workers.split(",")):
            r = one(policy, args.task, args.episodes, w, out)
            r["batch_size"] = LeRobotEvalConfig(n_episodes=args.episodes, batch_size=w).batch_size
            runs.append(r)

    print(f"Meta-World {args.task}, random ACT (480x480, shadows), {args.episodes} episodes, seeds 1000.., "
          f"{os.cpu_count()} CPU cores, load {os.getloadavg()[0]:.1f}")
    print(f"{'workers':>8s} {'side':18s} {'wall s':>8s} {'ep/min':>7s} {'1st ep s':>9s} {'steady ep/min':>14s}")
    for r in runs:
        for s in (r["lerobot"], r["ros"]):
            print(f"{str(r['workers']) + ' (' + str(r['batch_size']) + ')':>8s} {s['side']:18s} {s['wall_s']:8.1f} "
                  f"{s['episodes_per_min']:7.2f} {s['first_episode_s'] or float('nan'):9.1f} "
                  f"{s['steady_episodes_per_min'] or float('nan'):14.2f}")
        print(f"{'':8s} lerobot-eval wall / lerobot-ros wall {r['figure']:.3f}, steady-state ratio "
              f"{r['steady_ratio'] if r['steady_ratio'] is not None else 'n/a'}, per-episode results equal: {r['parity']}")
    figure = runs[0]["figure"]
    print(json.dumps({
        "bench": "eval", "figure": figure, "goal": GOAL, "goal_op": ">=", "meets_goal": bool(figure >= GOAL),
        "steady_goal": STEADY_GOAL, "parity": all(r["parity"] for r in runs), "runs": runs,
    }))


if __name__ == "__main__":
    main()
