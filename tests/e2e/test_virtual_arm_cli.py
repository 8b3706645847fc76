"""`lerobot-ros virtual-arm`: emulated, calibrated arms that LeRobot connects to without calibrating."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from lerobot.motors import Motor, MotorCalibration, MotorNormMode
from lerobot.motors.feetech import FeetechMotorsBus

pytestmark = pytest.mark.slow  # `lerobot-ros` imports every verb's module at start-up


def test_virtual_arm_serves_calibrated_leader_and_follower(tmp_path, ros_env):
    proc = subprocess.Popen(
        [sys.executable, "-m", "lerobot_ros.cli.main", "virtual-arm", "so101", "--output_dir", str(tmp_path), "--json"],
        env=ros_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        info = json.loads(proc.stdout.readline())
        assert set(info) == {"arm", "leader", "follower", "timing"}
        assert info["timing"] in ("realtime", "nice", "normal")  # what it got (tests/integration: realtime as root)
        assert info["follower"]["lerobot_type"] == "so101_follower"
        assert info["leader"]["port"] == str(tmp_path / "so101_leader")
        cal = json.loads(open(info["follower"]["calibration_file"]).read())
        calibration = {name: MotorCalibration(**c) for name, c in cal.items()}
        motors = {name: Motor(c["id"], "sts3215", MotorNormMode.DEGREES) for name, c in cal.items()}
        bus = FeetechMotorsBus(info["follower"]["port"], motors, calibration)
        for attempt in range(3):  # one ping per motor within the SDK's timeout: retried on a starved machine
            try:
                bus.connect()
                break
            except RuntimeError:
                bus.port_handler.closePort()
                if attempt == 2:
                    raise
        try:
            assert bus.is_calibrated  # the emulated motors hold the calibration the file describes
            positions = bus.sync_read("Present_Position")
            assert abs(positions["shoulder_pan"]) < 0.1
        finally:
            bus.disconnect(disable_torque=False)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    assert not os.path.exists(tmp_path / "so101_leader")


def test_virtual_arm_rejects_unknown_arm(capsys):
    from lerobot_ros.cli.main import main

    assert main(["virtual-arm", "ur5"]) == 2  # a usage error: main returns argparse's status, not SystemExit
    assert "invalid choice: 'ur5'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("pose", "complaint"),
    [
        ("0.1,0.2", "--leader_pose has 2 value(s); give one per joint (shoulder_pan, shoulder_lift"),
        ("0,0,0,0,0,x", "--leader_pose '0,0,0,0,0,x': give 6 numbers separated by commas"),
        ("0,0,0,0,0,2.5", "--leader_pose: gripper 2.5 rad is outside its range -1.151..1.151 rad"),
    ],
)
def test_a_bad_leader_pose_is_refused_in_one_line(tmp_path, capsys, pose, complaint):
    from lerobot_ros.cli.main import main

    assert main(["virtual-arm", "so101", "--role", "leader", "--output_dir", str(tmp_path), "--leader_pose", pose]) == 1
    err = capsys.readouterr().err.strip()
    assert complaint in err and "\n" not in err, err
    assert not (tmp_path / "so101_leader").exists()  # nothing left serving
