"""A node under a launch file's network mode starts only with that mode in force: a missing, unreadable or open
profile refuses in one line (never Fast DDS's silent fall-back to its open defaults); lan starts with a warning.
run_node's other start-up setting, the heap trim period, refuses a bad value the same way."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

DDS = Path(sys.prefix) / "share" / "lerobot_ros" / "config" / "dds"
TALKER = str(Path(sys.executable).parent / "talker")


def _talker(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("FASTDDS_DEFAULT_PROFILES_FILE", "LEROBOT_ROS_NETWORK")}
    full.update(env)
    # a node that starts runs until stopped: 5 s is enough to print its start-up line, then the timeout ends it
    try:
        return subprocess.run([TALKER], env=full, capture_output=True, text=True, timeout=5, cwd=tmp_path)
    except subprocess.TimeoutExpired as exc:
        out = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return subprocess.CompletedProcess([TALKER], returncode=None, stdout="", stderr=out)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        (None, "FASTDDS_DEFAULT_PROFILES_FILE is not set, so Fast DDS would listen on every interface"),
        ("missing.xml", "missing.xml (FASTDDS_DEFAULT_PROFILES_FILE) does not exist; refusing to start"),
        (
            "fastdds_remote.xml",
            "is not loopback-only: UDPv4 transport 'lerobot_ros_remote_udp' has no interfaceWhiteList",
        ),
    ],
)
def test_a_loopback_node_without_its_profile_refuses_to_start_in_one_line(tmp_path, profile, message):
    env = {"LEROBOT_ROS_NETWORK": "loopback"}
    if profile is not None:
        env["FASTDDS_DEFAULT_PROFILES_FILE"] = str(DDS / profile)
    done = _talker(tmp_path, **env)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("[Talker] error: network loopback") and message in done.stderr


def test_loopback_and_lan_say_which_mode_is_in_force(tmp_path):
    loopback = _talker(
        tmp_path, LEROBOT_ROS_NETWORK="loopback", FASTDDS_DEFAULT_PROFILES_FILE=str(DDS / "fastdds_loopback.xml")
    )
    assert loopback.returncode is None, loopback.stderr  # still running: it started
    assert "[Talker] network: loopback (only processes of this host reach this graph" in loopback.stderr
    lan = _talker(tmp_path, LEROBOT_ROS_NETWORK="lan", FASTDDS_DEFAULT_PROFILES_FILE=str(DDS / "fastdds_remote.xml"))
    assert lan.returncode is None, lan.stderr
    assert "[Talker] warning: network: lan (any host on this network can publish commands" in lan.stderr


def test_a_bad_heap_trim_period_refuses_to_start_in_one_line(tmp_path):
    done = _talker(tmp_path, LEROBOT_ROS_HEAP_TRIM_S="soon")
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("[Talker] error: LEROBOT_ROS_HEAP_TRIM_S='soon': give a period in seconds")
