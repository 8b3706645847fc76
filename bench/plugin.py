"""LeRobot's own `lerobot-record` through the `ros_contract` robot plugin on the SO-101 twin: does it hold its rate?

Set-up, as deployed: the twin (sim_bridge_node, realtime, episodes marked, front + wrist cameras) in its own
process; an emulated SO-101 leader on a pseudo-terminal read by LeRobot's own `so101_leader`; `lerobot-record`
as a process recording one episode of --seconds at --fps with the plugin. LeRobot's loop records one frame
per period and falls behind (fewer frames) when a loop (observation + teleop + action + frame hand-off) takes
longer than the period: figure = recorded frames / (fps x seconds), goal >= 0.98.

Also, in this process: `get_observation()` of the plugin (newest messages, decoded into LeRobot values) p50/p99
against the reference, copying the same numpy arrays in-process (what any in-process robot returns at least),
in alternating blocks so both see the same load.

    .venv/bin/python bench/plugin.py                        # 20 s at 30 fps, 2 cameras 160x120
    .venv/bin/python bench/plugin.py --seconds 60 --width 320 --height 240

Last line: one JSON object (figure = achieved fps / fps).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ROS_DOMAIN_ID", str(20 + os.getpid() % 80))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402

from lerobot_ros.ros.runtime import wait_until  # noqa: E402
from lerobot_ros.testing.twin import BIN, twin_command, twin_contract  # noqa: E402

GOAL = 0.98


def _start(cmd: list[str], log: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def record(tmp: Path, contract: Path, env: dict, fps: int, seconds: float) -> tuple[int, float]:
    """(frames lerobot-record wrote, wall seconds of the whole command)."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    root = tmp / "dataset"
    started = time.perf_counter()
    done = subprocess.run(
        [
            str(BIN / "lerobot-record"),
            "--robot.type=ros_contract",
            f"--robot.contract={contract}",
            "--robot.id=twin",
            "--teleop.type=so101_leader",
            f"--teleop.port={tmp / 'virt' / 'so101_leader'}",
            "--teleop.id=virtual_leader",
            f"--teleop.calibration_dir={tmp / 'virt' / 'calibration'}",
            "--dataset.repo_id=local/bench",
            f"--dataset.root={root}",
            "--dataset.single_task=hold",
            "--dataset.num_episodes=1",
            f"--dataset.episode_time_s={seconds}",
            "--dataset.reset_time_s=0",
            f"--dataset.fps={fps}",
            "--dataset.push_to_hub=false",
            "--play_sounds=false",
            "--display_data=false",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=seconds + 600,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"lerobot-record failed:\n{done.stderr[-3000:]}")
    return len(LeRobotDataset("local/bench", root=root)), wall


def observation_overhead(contract: Path, n: int, block: int = 25) -> dict:
    """get_observation() vs copying the same arrays, alternating blocks of `block` calls; ms per call."""
    from lerobot_ros.plugins.robot import RosContractRobot, RosContractRobotConfig

    robot = RosContractRobot(RosContractRobotConfig(contract=str(contract), id="bench", connect_timeout_s=30))
    plugin, reference = [], []
    try:
        robot.connect()
        obs = robot.get_observation()
        while len(plugin) < n:
            for _ in range(block):
                t0 = time.perf_counter()
                obs = robot.get_observation()
                plugin.append(time.perf_counter() - t0)
            for _ in range(block):
                t0 = time.perf_counter()
                {k: (np.copy(v) if isinstance(v, np.ndarray) else float(v)) for k, v in obs.items()}
                reference.append(time.perf_counter() - t0)
            time.sleep(1.0 / 30)  # let new frames arrive, as a 30 fps loop would
    finally:
        robot.disconnect()
    p = np.asarray(plugin) * 1e3
    r = np.asarray(reference) * 1e3
    return {
        "plugin_p50_ms": float(np.percentile(p, 50)),
        "plugin_p99_ms": float(np.percentile(p, 99)),
        "copy_p50_ms": float(np.percentile(r, 50)),
        "copy_p99_ms": float(np.percentile(r, 99)),
        "overhead_p50_ms": float(np.percentile(p, 50) - np.percentile(r, 50)),
        "overhead_p99_ms": float(np.percentile(p, 99) - np.percentile(r, 99)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the recorded episode")
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--width", type=int, default=160, help="camera width (both cameras)")
    parser.add_argument("--height", type=int, default=120)
    parser.add_argument("--calls", type=int, default=300, help="get_observation() calls timed")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench_plugin_") as folder:
        tmp = Path(folder)
        env = dict(os.environ, PYTHONUNBUFFERED="1", HF_LEROBOT_HOME=str(tmp / "hf"))
        os.environ["HF_LEROBOT_HOME"] = env["HF_LEROBOT_HOME"]
        contract = twin_contract(tmp / "twin.yaml", width=args.width, height=args.height)
        twin = _start(twin_command(args.width, args.height), tmp / "twin.log", env)
        leader = _start(
            [str(BIN / "lerobot-ros"), "virtual-arm", "so101", "--role", "leader", "--output_dir", str(tmp / "virt")],
            tmp / "leader.log",
            env,
        )
        try:
            wait_until(lambda: "ready in" in (tmp / "twin.log").read_text(), 240, what="the twin's first episode")
            wait_until(lambda: (tmp / "virt" / "so101_leader").exists(), 60, what="the virtual leader's port")
            frames, wall = record(tmp, contract, env, args.fps, args.seconds)
            overhead = observation_overhead(contract, args.calls)
        finally:
            _stop(leader)
            _stop(twin)

    expected = args.fps * args.seconds
    figure = frames / expected
    print(
        f"lerobot-record through --robot.type=ros_contract, SO-101 twin, 2 cameras {args.width}x{args.height}, "
        f"{args.seconds:g} s at {args.fps} fps (load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print(f"{'figure':36s} {'value':>10s}")
    print(f"{'frames recorded / expected':36s} {frames:>5d}/{expected:<5.0f}")
    print(f"{'achieved fps / fps (goal >= 0.98)':36s} {figure:10.3f}")
    print(f"{'lerobot-record wall time (s)':36s} {wall:10.1f}")
    for name, value in overhead.items():
        print(f"{name:36s} {value:10.3f}")
    print(
        json.dumps(
            {
                "bench": "plugin",
                "figure": round(figure, 4),
                "goal": GOAL,
                "goal_op": ">=",
                "meets_goal": bool(figure >= GOAL),
                "frames": frames,
                "expected_frames": int(expected),
                "record_wall_s": round(wall, 2),
                **{k: round(v, 4) for k, v in overhead.items()},
                "load_avg": round(os.getloadavg()[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
