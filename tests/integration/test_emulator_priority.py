"""The servo emulators answer like hardware on a loaded host: `lerobot-ros virtual-arm` raises its CPU priority where
it may (root here), so LeRobot's SDK gets its status packets within its ~34 ms timeout beside busy processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lerobot_ros.hardware.virtual.priority import EMULATOR_NICE

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="raising a priority needs root (or CAP_SYS_NICE)")


def test_virtual_arm_runs_at_the_emulator_priority(tmp_path):
    cli = Path(sys.executable).parent / "lerobot-ros"
    proc = subprocess.Popen(
        [str(cli), "virtual-arm", "so101", "--output_dir", str(tmp_path), "--json", "--duration_s", "30"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        json.loads(proc.stdout.readline())  # serving
        nice = int(Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[16])
        assert nice == EMULATOR_NICE
    finally:
        proc.terminate()
        proc.wait(timeout=30)
