"""`lerobot-ros demo --steps`: ACT trained with LeRobot's own lerobot-train on the demo's dataset (offline
settings), evaluated through policy_node; every printed "next step" works as printed (run with tiny settings,
hardware ones parsed); an interrupted training leaves no half-written checkpoint."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lerobot_ros.cli.demo import next_step_list, next_steps
from lerobot_ros.demo.driver import DemoError
from lerobot_ros.demo.train import lerobot_train_command, parse_losses, train_act


def test_train_command_is_offline_and_uploads_nothing(tmp_path):
    argv = lerobot_train_command(tmp_path / "ds", "local/x", tmp_path / "run", 20)
    assert argv[0] == "lerobot-train"
    for flag in (
        "--policy.pretrained_backbone_weights=null",
        "--policy.push_to_hub=false",
        "--wandb.enable=false",
        "--steps=20",
        f"--dataset.root={tmp_path / 'ds'}",
        f"--output_dir={tmp_path / 'run'}",
    ):
        assert flag in argv


def test_losses_are_read_from_lerobot_train_log_lines():
    log = (
        "INFO 2026-12-01 10:00:00 ot_train.py:489 step:1 smpl:8 ep:0 epch:0.01 loss:12.500 grdn:3.1 lr:1.0e-05\n"
        "noise loss:9 without a step\n"
        "INFO ... step:2K smpl:16K ep:40 epch:3.00 loss:0.750 grdn:1.0 lr:1.0e-05 updt_s:0.2\n"
    )
    assert parse_losses(log) == [(1, 12.5), (2000, 0.75)]


def test_next_steps_print_real_commands_and_the_checkpoint_once_trained(tmp_path):
    untrained = next_step_list(tmp_path / "demo")
    assert untrained[0].argv[:2] == ("lerobot-ros", "demo") and "--steps" in untrained[0].argv
    assert not any("PATH" in " ".join(s.argv) for s in untrained if not s.hardware)  # no placeholder outside hardware
    ckpt = tmp_path / "demo" / "train" / "checkpoints" / "last" / "pretrained_model"
    trained = next_step_list(tmp_path / "demo", ckpt)
    assert trained[0].argv == ("lerobot-ros", "demo", "--policy.path", str(ckpt))
    assert f"policy.path:={ckpt}" in trained[-1].argv and trained[-1].hardware
    text = next_steps(tmp_path / "demo", ckpt)
    for step in trained:  # printed exactly as a shell reads it back
        assert step.command in text and tuple(shlex.split(step.command)) == step.argv


@pytest.mark.slow  # lerobot-train imports torch and LeRobot: ~1 min on 2 cores
def test_failed_training_leaves_no_checkpoint_folder(tmp_path):
    (tmp_path / "empty_dataset").mkdir()
    with pytest.raises(DemoError, match=r"lerobot-train failed \(status \d+, log: "):
        train_act(
            tmp_path / "empty_dataset", "local/none", tmp_path / "train", 2, tmp_path / "train.log", timeout_s=600
        )
    assert not (tmp_path / "train").exists() and not (tmp_path / "train.partial").exists()


def _user_env() -> dict:
    """This session's DDS domain, the venv's console scripts on PATH (lerobot-ros / lerobot-train as a user types them)."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.slow
@pytest.mark.timeout(2400)  # the module's demo run (record, eval, convert, train, eval) comes first
def test_interrupted_training_leaves_no_checkpoint(tmp_path, ros_env, demo_out):
    """Ctrl-C during lerobot-train (the demo's train step): neither the checkpoint folder nor its partial."""
    demo_dataset = demo_out[0] / "dataset"
    script = (
        "import sys; from pathlib import Path; from lerobot_ros.demo.train import train_act; "
        f"train_act(Path({str(demo_dataset)!r}), 'local/lerobot_ros_demo', Path({str(tmp_path / 'train')!r}), 5000, "
        f"Path({str(tmp_path / 'train.log')!r}))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        env=ros_env,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    log = tmp_path / "train.log"
    deadline = time.monotonic() + 300
    started = "Start offline training"  # lerobot-train's line before its first step
    try:
        while time.monotonic() < deadline and not (log.exists() and started in log.read_text(errors="replace")):
            assert proc.poll() is None, proc.stdout.read().decode(errors="replace")[-3000:]
            time.sleep(0.5)
        assert log.exists() and started in log.read_text(errors="replace"), "training never started"
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert not (tmp_path / "train").exists() and not (tmp_path / "train.partial").exists()


def _tiny(step_argv: tuple[str, ...], out: Path) -> list[str]:
    """A printed next step with tiny settings appended (argparse and draccus take the last value)."""
    argv = list(step_argv)
    if argv[:2] == ["lerobot-ros", "demo"]:
        argv += ["--dataset.num_episodes", "1", "--eval.n_episodes", "1", "--output_dir", str(out)]
        if "--steps" in argv:
            argv += ["--steps", "2", "--env.observation_height", "48", "--env.observation_width", "48"]
    elif argv[0] == "lerobot-train":
        argv = [a for a in argv if not a.startswith("--output_dir=")]
        argv += [
            "--steps=2",
            "--batch_size=2",
            "--num_workers=0",
            "--log_freq=1",
            "--save_freq=2",
            f"--output_dir={out}",
        ]
    return argv


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory):
    """`lerobot-ros demo --steps 2` with tiny settings, typed as a user would (console scripts on PATH)."""
    env = _user_env()
    out = tmp_path_factory.mktemp("demo_train") / "demo"
    t0 = time.monotonic()
    proc = subprocess.run(
        [
            "lerobot-ros",
            "demo",
            "--dataset.num_episodes",
            "1",
            "--eval.n_episodes",
            "1",
            "--env.observation_height",
            "48",
            "--env.observation_width",
            "48",
            "--steps",
            "2",
            "--batch_size",
            "2",
            "--output_dir",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-3000:]
    print(f"demo --steps 2 (record 1, eval 1, convert, train, eval 1): {time.monotonic() - t0:.0f} s")
    return out, proc.stdout, env


@pytest.mark.slow
@pytest.mark.timeout(3600)  # the demo run, then each next step (three more demos, a training, a launch)
def test_demo_trains_evaluates_and_every_next_step_works_as_printed(tmp_path, demo_out):
    out, stdout, env = demo_out
    summary = json.loads((out / "summary.json").read_text())
    train = summary["train"]
    ckpt = Path(train["checkpoint"])
    assert train["steps"] == 2 and (ckpt / "config.json").is_file() and (ckpt / "model.safetensors").is_file()
    assert json.loads((ckpt / "config.json").read_text())["type"] == "act"
    assert train["final_loss"] is not None and train["final_loss"] > 0
    assert not (out / "train.partial").exists()
    info = json.loads(Path(summary["trained_eval_info"]).read_text())
    assert info["overall"]["n_episodes"] == 1 and summary["trained_eval_pc_success"] == info["overall"]["pc_success"]
    for needle in (
        "random weights (--policy.pretrained_backbone_weights=null)",
        "trained ACT      2 steps",
        "trained success",
        str(ckpt),
    ):
        assert needle in stdout

    # every printed next step: run with tiny settings (hardware ones are parsed by the launch runner)
    printed = stdout[stdout.index("next steps:") :]
    steps = next_step_list(out, ckpt)
    assert [s.command for s in steps] == [line.strip() for line in printed.splitlines()[2::2] if line.strip()]
    for i, step in enumerate(steps):
        if step.hardware:
            show = subprocess.run(
                [*step.argv[:3], *step.argv[3:], "--show-args"], env=env, capture_output=True, text=True, timeout=120
            )
            assert show.returncode == 0 and "port" in show.stdout, show.stdout + show.stderr
            continue
        if step.argv[:3] == ("lerobot-ros", "launch", "so101_virtual"):
            _launch_comes_up(list(step.argv), env, tmp_path / f"step{i}.log")
            continue
        argv = _tiny(step.argv, tmp_path / f"step{i}")
        if "--env.type" in argv and "so101" in argv:
            argv += ["--eval=false"]  # the twin's scripted pick renders slowly on a CPU; recording shows it works
        run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1500)
        assert run.returncode == 0, f"{shlex.join(argv)}\n{run.stdout[-3000:]}{run.stderr[-3000:]}"


def _launch_comes_up(argv: list[str], env: dict, log: Path) -> None:
    """A launch that runs until Ctrl-C: the follower publishes joint states; then Ctrl-C stops it cleanly."""
    from sensor_msgs.msg import JointState

    from lerobot_ros.ros.qos import SENSOR_QOS
    from lerobot_ros.ros.runtime import MessageCollector, RosRuntime

    with open(log, "w") as f:
        proc = subprocess.Popen(
            argv, env={**env, "PYTHONFAULTHANDLER": "1"}, stdout=f, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        with RosRuntime() as ros:
            probe = ros.create_node("next_step_probe")
            states = MessageCollector(probe, JointState, "/follower/joint_states", SENSOR_QOS)
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and len(states.messages) < 30:
                assert proc.poll() is None, log.read_text()[-3000:]
                time.sleep(0.5)
            if len(states.messages) < 30:  # what was robot_node doing? (faulthandler prints its threads' stacks)
                publishers = probe.count_publishers("/follower/joint_states")  # 0: robot_node never came up
                _abort_for_stacks(log, "robot")
                raise AssertionError(
                    f"{len(states.messages)} joint states; publishers seen: {publishers}\n{log.read_text()[-6000:]}"
                )
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(60)
    assert proc.returncode == 0, log.read_text()[-3000:]


def _abort_for_stacks(log: Path, name: str) -> None:
    """SIGABRT the launch's newest `name` process (its pid from the launch's "started (pid N)" line), so that
    PYTHONFAULTHANDLER writes every thread's stack into the log; waits up to 5 s for it to end."""
    pids = re.findall(rf"\[launch\] {name} started \(pid (\d+)\)", log.read_text(errors="replace"))
    if not pids:
        return
    try:
        os.kill(int(pids[-1]), signal.SIGABRT)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{pids[-1]}").exists():
        time.sleep(0.1)


def test_demo_with_a_policy_renders_at_the_policys_image_size(tmp_path, monkeypatch):
    """`demo --policy.path` without --env.observation_height/width takes the size the policy was trained on (a
    checkpoint of a 48x48 demo run again with the default 96x96 was refused by policy_node); a size given still
    wins."""
    import json as _json

    from lerobot_ros.cli import main as cli_main
    from lerobot_ros.demo import pipeline

    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "config.json").write_text(
        _json.dumps(
            {
                "type": "act",
                "input_features": {
                    "observation.image": {"type": "VISUAL", "shape": [3, 48, 64]},
                    "observation.state": {"type": "STATE", "shape": [4]},
                },
            }
        )
    )
    seen = []

    def fake_record(cfg, res, printer=print):  # the demo's first step: the size it renders at is settled
        seen.append((cfg.height, cfg.width))
        raise pipeline.DemoError("stop here")

    monkeypatch.setattr(pipeline, "record", fake_record)
    out = ["--output_dir", str(tmp_path / "o")]
    size = ["--env.observation_height", "96", "--env.observation_width", "96"]
    assert cli_main.main(["demo", "--policy.path", str(ckpt), *out]) == 1
    assert cli_main.main(["demo", "--policy.path", str(ckpt), *size, *out]) == 1
    assert cli_main.main(["demo", *out]) == 1
    assert seen == [(48, 64), (96, 96), (96, 96)]
