"""The colcon path (a robot with a full ROS install): build the whole workspace with colcon and the ament/rosidl wheels,
then run nodes from the install space and the launch runner against it, as on a robot.

The sources are copied to a temporary workspace so that nothing (build/, install/, log/) lands in the
repository; only src/ and msgs/ are package paths, so colcon never takes the repository root for one.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV = sys.prefix
COLCON = os.path.join(VENV, "bin", "colcon")
IGNORE = shutil.ignore_patterns("*.egg-info", "__pycache__", "build", "install", "log", ".pytest_cache")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.ros,
    pytest.mark.skipif(not os.path.exists(COLCON), reason="colcon is not installed in this environment"),
]


def in_install(ws: str, command: str, env: dict, timeout: float) -> subprocess.CompletedProcess:
    """Run `command` in bash after sourcing the install space, as a user on a robot would."""
    return subprocess.run(
        ["bash", "-c", f"source install/setup.bash && {command}"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    ws = str(tmp_path_factory.mktemp("colcon_ws"))
    for folder in ("src", "msgs", "launch", "config"):
        shutil.copytree(os.path.join(REPO, folder), os.path.join(ws, folder), ignore=IGNORE, symlinks=True)
    shutil.copy(os.path.join(REPO, "colcon.meta"), ws)
    env = dict(os.environ)
    env.pop("AMENT_PREFIX_PATH", None)
    env.pop("COLCON_PREFIX_PATH", None)
    build_env = dict(env, AMENT_PREFIX_PATH=VENV, PATH=os.path.join(VENV, "bin") + os.pathsep + env.get("PATH", ""))
    python = os.path.join(VENV, "bin", "python")
    build = subprocess.run(
        [
            COLCON,
            "build",
            "--merge-install",
            "--base-paths",
            "src",
            "msgs",
            "--metas",
            "colcon.meta",
            "--event-handlers",
            "console_cohesion+",
            "--cmake-args",
            f"-DPython3_EXECUTABLE={python}",
        ],
        cwd=ws,
        env=build_env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, f"colcon build failed:\n{build.stdout[-4000:]}\n{build.stderr[-4000:]}"
    return ws, env


def test_install_space_layout(workspace):
    ws, _ = workspace
    index = os.path.join(ws, "install", "share", "ament_index", "resource_index", "packages")
    assert {"lerobot_ros", "lerobot_ros_msgs"} <= set(os.listdir(index))
    for exe in ("talker", "listener", "lerobot-ros"):
        assert os.access(os.path.join(ws, "install", "lib", "lerobot_ros", exe), os.X_OK)
    assert os.path.isfile(os.path.join(ws, "install", "share", "lerobot_ros", "launch", "smoke.launch.yaml"))
    assert os.path.isfile(os.path.join(ws, "install", "share", "lerobot_ros", "package.xml"))


def test_python_packages_come_from_the_install_space(workspace):
    ws, env = workspace
    probe = in_install(
        ws,
        f"{shlex.quote(sys.executable)} -c 'import lerobot_ros, lerobot_ros_msgs.msg as m; "
        "print(lerobot_ros.__file__); print(m.__file__); print(m.EpisodeStatus.__name__)'",
        env,
        120,
    )
    assert probe.returncode == 0, probe.stderr
    pkg, msgs, name = probe.stdout.split()
    install = os.path.join(ws, "install")
    assert pkg.startswith(install) and msgs.startswith(install) and name == "EpisodeStatus"


def test_runner_against_the_install_space(workspace):
    ws, env = workspace
    install = os.path.join(ws, "install")
    printed = in_install(
        ws, "install/lib/lerobot_ros/lerobot-ros launch lerobot_ros smoke.launch.yaml --print", env, 120
    )
    assert printed.returncode == 0, printed.stderr
    sources = [line for line in printed.stdout.splitlines() if line.startswith("# ") and line.endswith(")")]
    commands = [line for line in printed.stdout.splitlines() if line.startswith("/")]
    # find-pkg-share and lib/<pkg>/<exec> resolved through the ament index to the install space
    assert len(sources) == 2
    assert all(os.path.join(install, "share", "lerobot_ros", "launch", "smoke.launch.yaml") in s for s in sources)
    assert [c.split()[0] for c in commands] == [
        os.path.join(install, "lib", "lerobot_ros", e) for e in ("talker", "listener")
    ]
    ran = in_install(
        ws, "install/lib/lerobot_ros/lerobot-ros launch lerobot_ros smoke.launch.yaml count:=5 width:=16", env, 120
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    summary = [line for line in ran.stdout.splitlines() if line.startswith("[listener] {")]
    assert summary and '"joint_states": 5' in summary[0] and '"image_shape": [12, 16, 3]' in summary[0]
