"""The demo's steps, each a real piece of the project run in its own process:

1. `lerobot-ros launch sim_metaworld` (or sim_so101): sim bridge (lockstep) + scripted expert + recorder;
2. this process drives N seeded episodes (EpisodeDriver): one rosbag2 MCAP per episode;
3. `lerobot-ros eval`: the scripted expert scored like lerobot-eval, with a video, attached to the bridge
   and expert the launch already runs (no second start-up); with --policy.path, eval starts its own
   bridge and policy node;
4. `lerobot-ros convert`: the bags -> a LeRobotDataset v3 (reloaded with LeRobotDataset as a check);
5. with --steps N: `lerobot-train` (ACT, N steps, offline settings: lerobot_ros.demo.train) on that dataset,
   then `lerobot-ros eval --policy.path` with the checkpoint through policy_node on the same simulator;
6. a summary of what was made and where.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from lerobot_ros.demo.config import DEFAULT_SIZE, ENVS, DemoConfig
from lerobot_ros.demo.demo_contract import write_demo_contract
from lerobot_ros.demo.driver import DemoError, RecordedEpisode
from lerobot_ros.demo.train import TrainResult
from lerobot_ros.processes.progress import EVAL_EPISODE, TQDM_COUNT, LogProgress
from lerobot_ros.processes.supervisor import ChildProcess

MARKER = ".lerobot_ros_demo"


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
    train: TrainResult | None = None
    train_note: str = ""
    trained_eval_info: Path | None = None
    trained_eval_success: float | None = None
    trained_eval_note: str = ""
    timings: dict = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(n.startswith("FAILED") for n in (self.eval_note, self.train_note, self.trained_eval_note))


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
            raise DemoError(f"{out} exists and is not a demo output folder; point --output_dir to a new folder")
        shutil.rmtree(out)
    (out / "logs").mkdir(parents=True)
    (out / MARKER).write_text("made by lerobot-ros demo; removed by the next run with the same --output_dir\n")


class LaunchProcess(ChildProcess):
    """`lerobot-ros launch ...` in its own process group, output to a log file; stopped with SIGINT like
    Ctrl-C. The runner stops its nodes itself, escalating; it takes the SIGTERM that follows after `timeout`
    as a second Ctrl-C (skip ahead a step), and SIGKILL comes 15 s after that."""

    log_path: Path  # always given (ChildProcess's is optional)

    def __init__(self, args: list[str], log: Path, env: dict, timeout: float = 40.0):
        super().__init__(
            _cli("launch", *args),
            label="launch",
            env=env,
            log=log,
            stdin=None,
            sigterm_timeout=timeout,
            sigkill_timeout=15.0,
        )
        self.start()

    def check_alive(self) -> None:
        if self.poll() is not None:
            raise DemoError(f"the launch exited early (status {self.returncode}):\n{self.tail()}")

    def tail(self, lines: int = 25) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join("    " + line for line in text[-lines:])

    def stop(self) -> int | None:
        """The launch's exit status; None when it was stopped already."""
        if self.finished:
            return None
        return super().stop()


def _run_step(
    cmd: list[str], log: Path, env: dict, timeout: float, what: str, progress: LogProgress | None = None
) -> None:
    """One step as a child process (Ctrl-C here stops it, SIGINT first); a DemoError when it fails or overruns.
    `progress` follows the step's log with a bar on the console while it runs."""
    try:
        with progress or contextlib.nullcontext():
            code = ChildProcess(cmd, label=what, env=env, log=log, stdin=None, sigterm_timeout=30.0).run(timeout)
    except subprocess.TimeoutExpired:
        raise DemoError(f"{what} took longer than {timeout:g} s; log: {log}") from None
    if code != 0:
        tail = "\n".join("    " + s for s in log.read_text(errors="replace").splitlines()[-15:])
        raise DemoError(f"{what} failed (status {code}); log: {log}\n{tail}")


def child_env() -> dict:
    env = dict(os.environ)
    env.setdefault("MUJOCO_GL", "egl")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def record(cfg: DemoConfig, res: DemoResult, printer=print) -> LaunchProcess:
    """Start the launch and record the episodes; returns the launch still running (eval may attach to it)."""
    from lerobot_ros.contract import load_contract
    from lerobot_ros.demo.driver import EpisodeDriver
    from lerobot_ros.ros.runtime import RosRuntime
    from lerobot_ros.ros.sim_rate import SimRateListener

    out = cfg.out
    contract_path = write_demo_contract(
        cfg.spec["contract"], out / "contract.yaml", cfg.spec["camera"], cfg.height, cfg.width
    )
    contract = load_contract(str(contract_path))
    res.bags_dir = out / "bags"
    args = [
        cfg.spec["launch"],
        "expert:=true",
        "record:=true",
        "mode:=lockstep",
        "rviz:=false",
        f"env.task:={cfg.sim_task}",
        f"contract:={contract_path}",
        f"output_dir:={res.bags_dir}",
        f"env.observation_width:={cfg.width}",
        f"env.observation_height:={cfg.height}",
        "reset_on_start:=false",
    ]
    printer(f"[demo] 1/{cfg.n_steps} launch: lerobot-ros launch {' '.join(args)}")
    launch = LaunchProcess(args, out / "logs" / "launch.log", child_env())
    topics = sorted(
        {f.topic for f in contract.features.values()} | ({contract.task.topic} if contract.task.topic else set())
    )
    try:
        with RosRuntime() as ros:
            node = ros.create_node("lerobot_ros_demo")
            driver = EpisodeDriver(node)
            rates = SimRateListener(node)  # the bridge's real-time factor, from /diagnostics
            t0 = time.monotonic()
            driver.wait_ready(topics, cfg.startup_timeout_s, alive=launch.check_alive)
            res.timings["startup_s"] = time.monotonic() - t0
            printer(f"[demo]      nodes up in {res.timings['startup_s']:.0f} s (log: {launch.log_path})")
            printer(
                f"[demo] 2/{cfg.n_steps} record {cfg.episodes} episode(s) of {cfg.env} {cfg.sim_task} with the scripted expert"
            )
            t0 = time.monotonic()
            for i in range(cfg.episodes):
                ep = driver.run_episode(cfg.seed + i, cfg.episode_timeout_s, alive=launch.check_alive)
                res.episodes.append(ep)
                printer(
                    f"[demo]      episode {i} (seed {ep.seed}): {ep.steps} steps, "
                    f"{'success' if ep.success else 'failure'}, {ep.wall_s:.1f} s -> {ep.bag}"
                    + (f"; {rates.summary('/sim')}" if rates.summary("/sim") else "")
                )
            res.timings["record_s"] = time.monotonic() - t0
    except BaseException:
        launch.stop()
        raise
    return launch


def stop_launch(launch: LaunchProcess, printer=print) -> None:
    code = launch.stop()
    if code not in (0, None):
        printer(f"[demo]      note: the launch ended with status {code} (log: {launch.log_path})")


def convert(cfg: DemoConfig, res: DemoResult, printer=print) -> None:
    res.dataset_dir = cfg.out / "dataset"
    printer(f"[demo] 4/{cfg.n_steps} convert {len(res.episodes)} bag(s) -> LeRobotDataset {res.dataset_dir}")
    t0 = time.monotonic()
    _run_step(
        _cli(
            "convert",
            str(res.bags_dir),
            "--contract",
            str(cfg.out / "contract.yaml"),
            "--dataset.root",
            str(res.dataset_dir),
            "--dataset.repo_id",
            "local/lerobot_ros_demo",
            "--dataset.rgb_encoder.vcodec",
            cfg.vcodec,
        ),
        cfg.out / "logs" / "convert.log",
        child_env(),
        900,
        "lerobot-ros convert",
        LogProgress(cfg.out / "logs" / "convert.log", TQDM_COUNT, len(res.episodes), "convert", "bag"),
    )
    res.timings["convert_s"] = time.monotonic() - t0
    info = json.loads((res.dataset_dir / "meta" / "info.json").read_text())
    res.dataset_frames, res.dataset_episodes = int(info["total_frames"]), int(info["total_episodes"])
    videos = sorted((res.dataset_dir / "videos").rglob("*.mp4"))
    res.video = videos[0] if videos else None


def _run_eval(
    cfg: DemoConfig, source: list[str], eval_dir: Path, log_name: str, step: str, printer=print
) -> tuple[Path | None, float | None, Path | None, str]:
    """`lerobot-ros eval` with `source` (--expert [--attach NS] | --policy.path DIR): info, success, video, note."""
    args = [
        "eval",
        "--env.type",
        cfg.env,
        "--env.task",
        cfg.sim_task,
        *source,
        "--eval.n_episodes",
        str(cfg.eval_episodes),
        "--env.observation_height",
        str(cfg.height),
        "--env.observation_width",
        str(cfg.width),
        "--videos",
        "1",
        "--output_dir",
        str(eval_dir),
    ]
    printer(f"[demo] {step} lerobot-ros {' '.join(args)}")
    try:
        log = cfg.out / "logs" / log_name
        bar = LogProgress(log, EVAL_EPISODE, cfg.eval_episodes, "eval", "episode")
        _run_step(_cli(*args), log, child_env(), 1200, "lerobot-ros eval", bar)
    except DemoError as exc:  # the recorded data is still worth converting: report, go on, exit non-zero
        note = f"FAILED: {exc}"
        printer(f"[demo]      {note}")
        return None, None, None, note
    info_path = eval_dir / "eval_info.json"
    info = json.loads(info_path.read_text())
    videos = sorted(eval_dir.rglob("*.mp4"))
    pc = info["overall"]["pc_success"]  # null: no episode finished
    return info_path, float("nan") if pc is None else float(pc), (videos[0] if videos else None), ""


def evaluate(cfg: DemoConfig, res: DemoResult, printer=print, attach: str | None = None) -> None:
    """`lerobot-ros eval`; `attach`: the namespace of a running bridge + policy source to use."""
    if not cfg.eval:
        res.eval_note = "skipped (--eval=false)"
        return
    if not eval_available():
        res.eval_note = "pending: `lerobot-ros eval` is not in this install yet"
        printer(f"[demo] 3/{cfg.n_steps} eval {res.eval_note}")
        return
    if cfg.policy_path:
        source = ["--policy.path", cfg.policy_path]
    else:
        source = ["--expert"] + (["--attach", attach] if attach else [])
    t0 = time.monotonic()
    try:
        res.eval_info, res.eval_success, res.eval_video, res.eval_note = _run_eval(
            cfg, source, cfg.out / "eval", "eval.log", f"3/{cfg.n_steps}", printer
        )
    finally:
        res.timings["eval_s"] = time.monotonic() - t0


def train_and_evaluate(cfg: DemoConfig, res: DemoResult, printer=print) -> None:
    """--train N: ACT on the demo dataset with lerobot-train, then that checkpoint through policy_node."""
    from lerobot_ros.demo.train import OFFLINE_BACKBONE_NOTE, train_act

    printer(
        f"[demo] 5/{cfg.n_steps} lerobot-train: ACT for {cfg.train_steps} step(s) on {res.dataset_dir} "
        f"(log: {cfg.out / 'logs' / 'train.log'})"
    )
    printer(f"[demo]      {OFFLINE_BACKBONE_NOTE}")
    t0 = time.monotonic()
    try:
        res.train = train_act(
            cast(Path, res.dataset_dir),  # set by convert(), which runs first
            "local/lerobot_ros_demo",
            cfg.out / "train",
            cfg.train_steps,
            cfg.out / "logs" / "train.log",
            batch_size=cfg.train_batch_size,
        )
    except DemoError as exc:
        res.train_note = f"FAILED: {exc}"
        printer(f"[demo]      {res.train_note}")
        return
    finally:
        res.timings["train_s"] = time.monotonic() - t0
    tr = res.train
    loss = f"loss {tr.first_loss:.3f} -> {tr.final_loss:.3f}" if tr.final_loss is not None else "loss not logged"
    printer(f"[demo]      {tr.steps} steps in {tr.seconds:.0f} s, {loss}; checkpoint {tr.checkpoint}")
    if not cfg.eval:
        res.trained_eval_note = "skipped (--eval=false)"
        return
    t0 = time.monotonic()
    try:
        res.trained_eval_info, res.trained_eval_success, _, res.trained_eval_note = _run_eval(
            cfg,
            ["--policy.path", str(tr.checkpoint)],
            cfg.out / "eval_trained",
            "eval_trained.log",
            f"6/{cfg.n_steps}",
            printer,
        )
    finally:
        res.timings["eval_trained_s"] = time.monotonic() - t0


def resolve_size(cfg: DemoConfig) -> DemoConfig:
    """The camera size the demo renders: as asked, else what the policy was trained on (a demo checkpoint: the
    demo's own size), else DEFAULT_SIZE; a policy folder without a readable config is one line, before minutes
    of recording."""
    from dataclasses import replace

    height, width = cfg.height, cfg.width
    if cfg.policy_path:
        from lerobot_ros.eval.plan import EvalSetupError, policy_image_shapes
        from lerobot_ros.policy.loading import PolicyLoadError, read_policy_config

        try:
            read_policy_config(cfg.policy_path)
            sizes = set(policy_image_shapes(cfg.policy_path).values())
        except (PolicyLoadError, EvalSetupError) as exc:
            raise DemoError(str(exc)) from None
        if not (height or width) and len(sizes) == 1:
            height, width = sizes.pop()
    return replace(cfg, height=height or DEFAULT_SIZE, width=width or DEFAULT_SIZE)


def run_demo(cfg: DemoConfig, printer=print) -> DemoResult:
    if cfg.env not in ENVS:
        raise DemoError(f"unknown env {cfg.env!r}; use one of {', '.join(ENVS)}")
    if cfg.episodes < 1:
        raise DemoError("--dataset.num_episodes must be at least 1")
    cfg = resolve_size(cfg)
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
    if cfg.train_steps:
        train_and_evaluate(cfg, res, printer)
    res.timings["total_s"] = time.monotonic() - t0
    (cfg.out / "summary.json").write_text(json.dumps(summary_dict(cfg, res), indent=2))
    return res


def summary_dict(cfg: DemoConfig, res: DemoResult) -> dict:
    wins = sum(e.success for e in res.episodes)
    return {
        "env": cfg.env,
        "task": cfg.sim_task,
        "recorded_episodes": len(res.episodes),
        "recorded_successes": wins,
        "record_success_rate": round(100.0 * wins / max(1, len(res.episodes)), 1),
        "dataset_episodes": res.dataset_episodes,
        "dataset_frames": res.dataset_frames,
        "bags": str(res.bags_dir),
        "dataset": str(res.dataset_dir),
        "video": str(res.video) if res.video else None,
        "eval_info": str(res.eval_info) if res.eval_info else None,
        "eval_pc_success": res.eval_success,
        "eval_video": str(res.eval_video) if res.eval_video else None,
        "eval_note": res.eval_note,
        "train": None
        if res.train is None
        else {
            "steps": res.train.steps,
            "checkpoint": str(res.train.checkpoint),
            "first_loss": res.train.first_loss,
            "final_loss": res.train.final_loss,
            "seconds": round(res.train.seconds, 1),
        },
        "train_note": res.train_note,
        "trained_eval_info": str(res.trained_eval_info) if res.trained_eval_info else None,
        "trained_eval_pc_success": res.trained_eval_success,
        "trained_eval_note": res.trained_eval_note,
        "timings_s": {k: round(v, 1) for k, v in res.timings.items()},
    }
