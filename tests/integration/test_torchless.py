"""Robot-side processes without torch (lerobot_ros.ros.torchless), each case in a fresh interpreter: LeRobot's robot,
teleoperator, motor and camera modules import under the stand-in with no torch loaded; anything that really needs
torch fails in one clear line; LEROBOT_ROS_TORCH=1 or an already imported torch keep the real one."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def run(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env={**os.environ, **env}
    )


def test_lerobots_robot_side_modules_import_without_torch_and_a_real_use_says_what_to_do():
    done = run(
        """
import sys
from lerobot_ros.ros.torchless import keep_torch_out, torch_is_real
assert keep_torch_out()
from lerobot.robots.so_follower import SOFollower, SOFollowerRobotConfig
from lerobot.teleoperators.so_leader import SOLeader
from lerobot.motors.feetech import FeetechMotorsBus
from lerobot.cameras.opencv import OpenCVCamera
import lerobot_ros.nodes.robot_node, lerobot_ros.nodes.camera_node, lerobot_ros.nodes.episode_recorder_node
assert not torch_is_real() and "torch._C" not in sys.modules
import torch
for use in ("torch.zeros(3)", "__import__('torch.nn')"):
    try:
        eval(use)
    except ImportError as exc:
        print("REFUSED", exc)
print("OK")
"""
    )
    assert done.returncode == 0, done.stderr[-3000:]
    refused = [line for line in done.stdout.splitlines() if line.startswith("REFUSED")]
    assert len(refused) == 2
    assert (
        "torch.zeros: this robot-side process runs without torch" in refused[0] and "LEROBOT_ROS_TORCH=1" in refused[0]
    )
    assert "import torch.nn: this robot-side process runs without torch" in refused[1]


def test_the_real_torch_when_asked_for_or_already_there():
    asked = run(
        "from lerobot_ros.ros.torchless import keep_torch_out, torch_is_real\n"
        "assert not keep_torch_out()\nimport torch\nassert torch_is_real() and torch.zeros(2).sum() == 0\nprint('OK')",
        LEROBOT_ROS_TORCH="1",
    )
    assert asked.returncode == 0 and "OK" in asked.stdout, asked.stderr[-2000:]
    present = run(
        "import torch\nfrom lerobot_ros.ros.torchless import keep_torch_out, torch_is_real\n"
        "assert not keep_torch_out() and torch_is_real()\nprint('OK')"
    )
    assert present.returncode == 0 and "OK" in present.stdout, present.stderr[-2000:]
