"""The demo's steps, each a real piece of the project run in its own process:

1. `lerobot-ros launch sim_metaworld` (or sim_so101): sim bridge (lockstep) + scripted expert + recorder;
2. this process drives N seeded episodes (EpisodeDriver): one rosbag2 MCAP per episode;
3. `lerobot-ros eval`: the scripted expert scored like lerobot-eval, with a video, attached to the bridge
   and expert the launch already runs (no second start-up); with --policy-path, eval starts its own
   bridge and policy node;
4. `lerobot-ros convert`: the bags -> a LeRobotDataset v3 (reloaded with LeRobotDataset as a check);
5. a summary of what was made and where.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lerobot_ros.demo.demo_contract import write_demo_contract
from lerobot_ros.demo.driver import DemoError, RecordedEpisode

MARKER = ".lerobot_ros_demo"
#: env -> launch file, shipped contract, camera topic (relative to /sim), expert task
ENVS = {
    "metaworld": {"launch": "sim_metaworld", "contract": "metaworld", "camera": "corner2/image_raw", "task": "push-v3"},
    "so101": {"launch": "sim_so101", "contract": "so101_sim", "camera": "front/image_raw", "task": "pick"},
}


@dataclass
class DemoConfig:
    env: str = "metaworld"
    task: str = ""
    episodes: int = 3
    seed: int = 0
    height: int = 96
    width: int = 96
    out: Path = Path("outputs/demo")
    eval_episodes: int = 3
    eval: bool = True
    policy_path: str | None = None
    vcodec: str = "libsvtav1"
    startup_timeout_s: float = 240.0
    episode_timeout_s: float = 240.0

    @property
    def spec(self) -> dict:
        return ENVS[self.env]

    @property
    def sim_task(self) -> str:
        return self.task or self.spec["task"]


@dataclass
class DemoResult:
    episodes: list[RecordedEpisode] = field(default_factory=list)
    bags_dir: Path | None = None
    dataset_dir: Path | None = None
    dataset_frames: int = 0
    dataset_episodes: int = 0
    video: Path | None = None
    eval_info: Path | None = None
    eval_success: float | None = None
    eval_video: Path | None = None
    eval_note: str = ""

    @property
    def failed(self) -> bool:
        return self.eval_note.startswith("FAILED")
    timings: dict = field(default_factory=dict)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "lerobot_ros.cli.main", *args]


def eval_available() -> bool:
    """Whether `lerobot-ros eval` can run here (the demo calls it as a process; it never imports the cli)."""
    import importlib.util

    return importlib.util.find_spec("lerobot_ros.eval") is not None


def prepare_output(out: Path) -> None:
    """A fresh output folder; an earlier demo's (it carries the marker file) is replaced, anything else refused."""
    if out.exists():
        if not (out / MARKER).is_file():
            raise DemoError(f"{out} exists and is not a demo output folder; pass --out to a new folder")
        shutil.rmtree(out)
    (out / "logs").mkdir(parents=True)
    (out / MARKER).write_text("made by lerobot-ros demo; removed by the next run with the same --out\n")


class LaunchProcess:
    """`lerobot-ros launch ...` in its own process group, output to a log file; stopped with SIGINT like Ctrl-C."""

    def __init__(self, args: list[str], log: Path, env: dict):
        self.log_path = log
        self._log = open(log, "w")
        self.proc = subprocess.Popen(_cli("launch", *args), stdout=self._log, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise DemoError(f"the launch exited early (status {self.proc.returncode}):\n{self.tail()}")

    def tail(self, lines: int = 25) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join("    " + line for line in text[-lines:])

    def stop(self, timeout: float = 40.0) -> int | None:
        """Ctrl-C for the runner (it stops its nodes, escalating itself); None when already stopped."""
        if self._log.closed:
            return None
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:  # the runner is stuck: a second SIGINT makes it skip ahead
                os.killpg(self.proc.pid, signal.SIGINT)
                try:
                    self.proc.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait()
        self._log.close()
        return self.proc.returncode


def _run_step(cmd: list[str], log: Path, env: dict, timeout: float, what: str) -> None:
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise DemoError(f"{what} took longer than {timeout:g} s; log: {log}") from None
        except BaseException:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(30)
            raise
    if code != 0:
        tail = "\n".join("    " + s for s in log.read_text(errors="replace").splitlines()[-15:])
        raise DemoError(f"{what} failed (status {code}); log: {log}\n{tail}")


def child_env() -> dict:
    env = dict(os.environ)
    env.setdefault("MUJOCO_GL", "egl")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def record(cfg: DemoConfig, res: DemoResult, printer=print) -> "LaunchProcess":
    """Start the launch and record the episodes; returns the launch still running (eval may attach to it)."""
    from lerobot_ros.contract import load_contract
    from lerobot_ros.demo.driver import EpisodeDriver
    from lerobot_ros.ros.runtime import RosRuntime
    from lerobot_ros.ros.sim_rate import SimRateListener

    out = cfg.out
    contract_path = write_demo_contract(cfg.spec["contract"], out / "contract.yaml", cfg.spec["camera"], cfg.height, cfg.width)
    contract = load_contract(str(contract_path))
    res.bags_dir = out / "bags"
    args = [cfg.spec["launch"], "expert:=true", "record:=true", "mode:=lockstep", "rviz:=false",
            f"task:={cfg.sim_task}", f"contract:={contract_path}", f"output_dir:={res.bags_dir}",
            f"render_width:={cfg.width}", f"render_height:={cfg.height}", "reset_on_start:=false"]
    printer(f"[demo] 1/4 launch: lerobot-ros launch {' '.join(args)}")
    launch = LaunchProcess(args, out / "logs" / "launch.log", child_env())
    topics = sorted({f.topic for f in contract.features.values()} | ({contract.task.topic} if contract.task.topic else set()))
    try:
        with RosRuntime() as ros:
            node = ros.create_node("lerobot_ros_demo")
            driver = EpisodeDriver(node)
            rates = SimRateListener(node)  # the bridge's real-time factor, from /diagnostics
            t0 = time.monotonic()
            driver.wait_ready(topics, cfg.startup_timeout_s, alive=launch.check_alive)
            res.timings["startup_s"] = time.monotonic() - t0
            printer(f"[demo]      nodes up in {res.timings['startup_s']:.0f} s (log: {launch.log_path})")
            printer(f"[demo] 2/4 record {cfg.episodes} episode(s) of {cfg.env} {cfg.sim_task} with the scripted expert")
            t0 = time.monotonic()
            for i in range(cfg.episodes):
                ep = driver.run_episode(cfg.seed + i, cfg.episode_timeout_s, alive=launch.check_alive)
                res.episodes.append(ep)
                printer(f"[demo]      episode {i} (seed {ep.seed}): {ep.steps} steps, "
                        f"{'success' if ep.success else 'failure'}, {ep.wall_s:.1f} s -> {ep.bag}"
                        + (f"; {rates.summary('/sim')}" if rates.summary("/sim") else ""))
            res.timings["record_s"] = time.monotonic() - t0
    except BaseException:
        launch.stop()
        raise
    return launch


def stop_launch(launch: "LaunchProcess", printer=print) -> None:
    code = launch.stop()
    if code not in (0, None):
        printer(f"[demo]      note: the launch ended with status {code} (log: {launch.log_path})")


def convert(cfg: DemoConfig, res: DemoResult, printer=print) -> None:
    res.dataset_dir = cfg.out / "dataset"
    printer(f"[demo] 4/4 convert {len(res.episodes)} bag(s) -> LeRobotDataset {res.dataset_dir}")
    t0 = time.monotonic()
    _run_step(_cli("convert", str(res.bags_dir), "--contract", str(cfg.out / "contract.yaml"), "--out",
                   str(res.dataset_dir), "--repo-id", "local/lerobot_ros_demo", "--vcodec", cfg.vcodec, "--no-progress"),
              cfg.out / "logs" / "convert.log", child_env(), 900, "lerobot-ros convert")
    res.timings["convert_s"] = time.monotonic() - t0
    info = json.loads((res.dataset_dir / "meta" / "info.json").read_text())
    res.dataset_frames, res.dataset_episodes = int(info["total_frames"]), int(info["total_episodes"])
    videos = sorted((res.dataset_dir / "videos").rglob("*.mp4"))
    res.video = videos[0] if videos else None


def evaluate(cfg: DemoConfig, res: DemoResult, printer=print, attach: str | None = None) -> None:
    """`lerobot-ros eval`; `attach`: the namespace of a running bridge + policy source to use."""
    if not cfg.eval:
        res.eval_note = "skipped (--no-eval)"
        return
    if not eval_available():
        res.eval_note = "pending: `lerobot-ros eval` is not in this install yet"
        printer(f"[demo] 3/4 eval {res.eval_note}")
        return
    eval_dir = cfg.out / "eval"
    if cfg.policy_path:
        source = ["--policy.path", cfg.policy_path]
    else:
        source = ["--expert"] + (["--attach", attach] if attach else [])
    args = ["eval", "--env", cfg.env, "--task", cfg.sim_task, *source, "--n-episodes", str(cfg.eval_episodes),
            "--render", f"{cfg.height}x{cfg.width}", "--videos", "1", "--output-dir", str(eval_dir)]
    printer(f"[demo] 3/4 lerobot-ros {' '.join(args)}")
    t0 = time.monotonic()
    try:
        _run_step(_cli(*args), cfg.out / "logs" / "eval.log", child_env(), 1200, "lerobot-ros eval")
    except DemoError as exc:  # the recorded data is still worth converting: report, go on, exit non-zero
        res.eval_note = f"FAILED: {exc}"
        printer(f"[demo]      {res.eval_note}")
        return
    finally:
        res.timings["eval_s"] = time.monotonic() - t0
    res.eval_info = eval_dir / "eval_info.json"
    info = json.loads(res.eval_info.read_text())
    res.eval_success = float(info["overall"]["pc_success"])
    videos = sorted(eval_dir.rglob("*.mp4"))
    res.eval_video = videos[0] if videos else None


def run_demo(cfg: DemoConfig, printer=print) -> DemoResult:
    if cfg.env not in ENVS:
        raise DemoError(f"unknown env {cfg.env!r}; use one of {', '.join(ENVS)}")
    if cfg.episodes < 1:
        raise DemoError("--episodes must be at least 1")
    prepare_output(cfg.out)
    res = DemoResult()
    t0 = time.monotonic()
    launch = record(cfg, res, printer)
    try:
        if cfg.policy_path:  # the user's policy gets its own bridge + policy node from eval
            stop_launch(launch, printer)
        evaluate(cfg, res, printer, attach=None if cfg.policy_path else "/sim")
    finally:
        stop_launch(launch, printer)
    convert(cfg, res, printer)
    res.timings["total_s"] = time.monotonic() - t0
    (cfg.out / "summary.json").write_text(json.dumps(summary_dict(cfg, res), indent=2))
    return res


def summary_dict(cfg: DemoConfig, res: DemoResult) -> dict:
    wins = sum(e.success for e in res.episodes)
    return {
        "env": cfg.env, "task": cfg.sim_task,
        "recorded_episodes": len(res.episodes), "recorded_successes": wins,
        "record_success_rate": round(100.0 * wins / max(1, len(res.episodes)), 1),
        "dataset_episodes": res.dataset_episodes, "dataset_frames": res.dataset_frames,
        "bags": str(res.bags_dir), "dataset": str(res.dataset_dir), "video": str(res.video) if res.video else None,
        "eval_info": str(res.eval_info) if res.eval_info else None, "eval_pc_success": res.eval_success,
        "eval_video": str(res.eval_video) if res.eval_video else None, "eval_note": res.eval_note,
        "timings_s": {k: round(v, 1) for k, v in res.timings.items()},
    }
