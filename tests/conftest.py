"""Test-wide set-up: an isolated DDS domain per test session, offscreen GL, no hub access."""

from __future__ import annotations

import os
import sys

# Before anything imports rclpy: a domain id of our own (derived from the pid, so parallel runs on one
# machine do not see each other) and localhost-only discovery.
os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import pytest  # noqa: E402

from lerobot_ros.ros.runtime import RosRuntime  # noqa: E402


@pytest.fixture
def ros():
    """A private rclpy context with an executor spinning in a thread; torn down in the safe order."""
    runtime = RosRuntime()
    runtime.start()
    try:
        yield runtime
    finally:
        runtime.close()


@pytest.fixture
def ros_env() -> dict[str, str]:
    """Environment for child processes that must join this test session's DDS domain."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture
def python() -> str:
    return sys.executable
