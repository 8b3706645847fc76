"""Train a small ACT on the demo's dataset with LeRobot's own `lerobot-train`, offline.

The command is what a user would type (`lerobot_train_command`), so the demo's "next steps" print the
same thing that the demo runs. Two choices make it work on an offline CPU install:

- `--policy.pretrained_backbone_weights=null`: ACT's ResNet-18 otherwise starts from torchvision's ImageNet
  weights, which are downloaded from the internet on first use. Offline, the backbone starts from random
  weights; with network access, drop the flag (LeRobot's default, `ResNet18_Weights.IMAGENET1K_V1`): a policy
  learns far more from a few episodes with a pretrained backbone.
- `--policy.push_to_hub=false --wandb.enable=false`: nothing is uploaded or logged online.

The run trains into `<out>.partial` and is renamed to `<out>` only when `lerobot-train` exits cleanly, so the
checkpoint folder is either complete or absent (an interrupted run leaves no half-written checkpoint).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from lerobot_ros.demo.driver import DemoError
from lerobot_ros.processes.progress import TRAIN_STEP, LogProgress
from lerobot_ros.processes.supervisor import ChildProcess

OFFLINE_BACKBONE_NOTE = (
    "ACT's ResNet-18 backbone starts from random weights (--policy.pretrained_backbone_weights=null): this install "
    "is offline and torchvision's ImageNet weights are downloaded from the internet. With network access, drop that "
    "flag to start from ImageNet weights (LeRobot's default), which learns much more from a few episodes."
)
_LOSS = re.compile(r"\bstep:(\S+) .*?\bloss:([-+0-9.eE]+)")


@dataclass(frozen=True)
class TrainResult:
    checkpoint: Path  # the pretrained_model folder of the last checkpoint
    steps: int
    first_loss: float | None
    final_loss: float | None
    seconds: float


def lerobot_train_command(
    dataset_root: Path, repo_id: str, output_dir: Path, steps: int, batch_size: int = 8, device: str = "cpu"
) -> list[str]:
    """`lerobot-train` arguments that work offline on a CPU (see the module docstring)."""
    return [
        "lerobot-train",
        f"--dataset.repo_id={repo_id}",
        f"--dataset.root={dataset_root}",
        "--policy.type=act",
        "--policy.pretrained_backbone_weights=null",
        "--policy.push_to_hub=false",
        f"--policy.device={device}",
        "--wandb.enable=false",
        f"--steps={steps}",
        f"--batch_size={batch_size}",
        f"--output_dir={output_dir}",
    ]


def parse_losses(log_text: str) -> list[tuple[int, float]]:
    """(step, loss) pairs from lerobot-train's `step:N ... loss:X` log lines."""
    out = []
    for step, loss in _LOSS.findall(log_text):
        try:
            out.append((int(float(step.rstrip("K")) * (1000 if step.endswith("K") else 1)), float(loss)))
        except ValueError:
            continue
    return out


def train_act(
    dataset_root: Path,
    repo_id: str,
    output_dir: Path,
    steps: int,
    log_path: Path,
    timeout_s: float = 3600.0,
    batch_size: int = 8,
) -> TrainResult:
    """Run lerobot-train in a child process; the checkpoint appears at `output_dir` whole, or not at all."""
    if steps < 1:
        raise DemoError("--steps needs at least 1 step")
    partial = output_dir.with_name(output_dir.name + ".partial")
    for stale in (partial, output_dir):
        if stale.exists():
            shutil.rmtree(stale)
    argv = lerobot_train_command(dataset_root, repo_id, partial, steps, batch_size)
    # a log line every 2 % of the steps: the console's bar (processes.progress) moves as training goes
    argv[1:1] = [f"--log_freq={max(1, steps // 50)}", f"--save_freq={steps}", "--num_workers=0"]
    cmd = [sys.executable, "-m", "lerobot.scripts.lerobot_train", *argv[1:]]
    t0 = time.monotonic()
    try:
        # its own process group: Ctrl-C here stops it (SIGINT, then SIGTERM after 30 s) before the cleanup below
        with LogProgress(log_path, TRAIN_STEP, steps, "train", "step"):
            code = ChildProcess(cmd, label="lerobot-train", log=log_path, sigterm_timeout=30.0).run(timeout_s)
    except subprocess.TimeoutExpired:
        shutil.rmtree(partial, ignore_errors=True)
        raise DemoError(f"lerobot-train did not finish in {timeout_s:.0f} s (log: {log_path})") from None
    except BaseException:  # Ctrl-C: no half-written checkpoint is left behind
        shutil.rmtree(partial, ignore_errors=True)
        raise
    text = log_path.read_text(errors="replace")
    if code != 0:
        shutil.rmtree(partial, ignore_errors=True)
        tail = "\n".join("    " + line for line in text.splitlines()[-15:])
        raise DemoError(f"lerobot-train failed (status {code}, log: {log_path}):\n{tail}")
    partial.rename(output_dir)
    checkpoint = output_dir / "checkpoints" / "last" / "pretrained_model"
    if not (checkpoint / "config.json").is_file():
        raise DemoError(f"lerobot-train finished but wrote no checkpoint at {checkpoint} (log: {log_path})")
    losses = parse_losses(text)
    return TrainResult(
        checkpoint=checkpoint,
        steps=steps,
        first_loss=losses[0][1] if losses else None,
        final_loss=losses[-1][1] if losses else None,
        seconds=time.monotonic() - t0,
    )
