"""The wheels as a new user installs them: built from this checkout, installed by uv into fresh venvs (no
clone on the path, run from a folder outside it), then the commands README's install paths promise.

The base install must work without LeRobot or torch (every node, the launch runner, `--help`) and say which
extra a verb needs; `lerobot-ros[sim]` must run the demo and launch the SO-101 twin from the wheel's
share/ and lib/ alone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import zipfile

import pytest

from lerobot_ros.cli.main import VERBS
from lerobot_ros.testing.wheels import DISCOVERY_SNIPPET, PLUGIN_TYPES, PLUGINS, FreshVenv, build_wheels, check_contents

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    return build_wheels(out)


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    """A working folder outside the checkout (nothing of the clone is found through the current folder)."""
    return tmp_path_factory.mktemp("user")


@pytest.fixture(scope="module")
def base(wheels, tmp_path_factory):
    return FreshVenv.create(tmp_path_factory.mktemp("venvs") / "base", wheels["lerobot_ros"].parent, "lerobot-ros")


@pytest.fixture(scope="module")
def sim(wheels, tmp_path_factory):
    return FreshVenv.create(
        tmp_path_factory.mktemp("venvs") / "sim",
        wheels["lerobot_ros"].parent,
        "lerobot-ros[sim]",
        *(p.name for p in PLUGINS),
    )


def test_each_wheel_carries_its_data_files_and_executables(wheels):
    for wheel in wheels.values():
        assert check_contents(wheel) == []
    assert wheels["lerobot_ros"].name.endswith("-py3-none-any.whl")
    assert wheels["lerobot_ros_msgs"].name.endswith("-cp312-cp312-manylinux_2_28_x86_64.whl")
    with zipfile.ZipFile(wheels["lerobot_ros"]) as whl:
        meta = whl.read(next(n for n in whl.namelist() if n.endswith("dist-info/METADATA"))).decode()
    assert "Requires-Dist: lerobot-ros-msgs==" in meta
    assert not any(line.startswith("Requires-Dist: lerobot[") and "extra ==" not in line for line in meta.splitlines())
    for extra in ("dataset", "hardware", "sim", "policy", "train", "viewer", "ray", "all"):
        assert f"Provides-Extra: {extra}" in meta


def test_base_install_has_no_lerobot_and_still_answers_help(base, outside):
    assert base.run(["python", "-c", "import lerobot"], outside).returncode == 1
    assert base.run(["python", "-c", "import torch"], outside).returncode == 1
    shown = base.run(["lerobot-ros", "--help"], outside)
    assert shown.returncode == 0, shown.stderr
    for verb in VERBS:
        assert verb in shown.stdout
    located = base.run(["python", "-c", "import lerobot_ros, lerobot_ros_msgs; print(lerobot_ros.__file__)"], outside)
    assert located.returncode == 0, located.stderr
    assert located.stdout.strip().startswith(str(base.path)), "the package must come from the fresh venv"


@pytest.mark.parametrize(
    ("argv", "extra"),
    [
        (["lerobot-ros", "demo"], "sim"),
        (["lerobot-ros", "view", "--help"], "viewer"),
        (["lerobot-ros", "virtual-arm", "--help"], "hardware"),
        (["viewer_node"], "viewer"),
    ],
)
def test_base_install_names_the_extra_a_command_needs(base, outside, argv, extra):
    done = base.run(argv, outside, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"needs the '{extra}' extra" in done.stderr
    assert f'pip install "lerobot-ros[{extra}]"' in done.stderr
    assert "Traceback" not in done.stderr


def test_base_install_launches_the_smoke_file_from_its_share_and_lib(base, outside):
    done = base.run(["lerobot-ros", "launch", "smoke", "count:=20"], outside, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    said = next(line for line in done.stdout.splitlines() if line.startswith("[listener] {"))
    summary = json.loads(said[len("[listener] ") :])
    assert summary["joint_states"] == 20 and summary["images"] >= 1, summary
    assert summary["image_shape"] == [48, 64, 3]
    assert (
        f"{base.path}/lib/lerobot_ros/talker" in base.run(["lerobot-ros", "launch", "smoke", "--print"], outside).stdout
    )


FIRST_JOINT_STATE = """
import sys, rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState
from lerobot_ros.ros.qos import SENSOR_QOS
rclpy.init()
node = Node("wheel_check")
got = []
node.create_subscription(JointState, "/sim/joint_states", got.append, SENSOR_QOS)
import time
deadline = time.monotonic() + float(sys.argv[1])
while not got and time.monotonic() < deadline:
    rclpy.spin_once(node, timeout_sec=0.5)
print(",".join(got[0].name) if got else "none", flush=True)
"""


def test_sim_install_launches_the_twin(sim, outside):
    check = sim.run(["lerobot-ros", "launch", "sim_so101", "--check"], outside)
    assert check.returncode == 0, check.stdout + check.stderr
    launch = sim.popen(["lerobot-ros", "launch", "sim_so101", "rviz:=false"], outside)
    try:
        heard = sim.run(["python", "-c", FIRST_JOINT_STATE, "150"], outside, timeout=200)
        assert heard.stdout.strip().startswith("shoulder_pan,"), heard.stdout + heard.stderr
    finally:
        os.killpg(launch.pid, signal.SIGINT)
        try:
            output, _ = launch.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(launch.pid, signal.SIGKILL)
            output, _ = launch.communicate()
    assert "Traceback" not in output, output


def test_sim_install_runs_the_demo(sim, outside):
    out = outside / "demo"
    done = sim.run(["lerobot-ros", "demo", "--output_dir", str(out)], outside, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dataset_episodes"] == 3
    assert summary["eval_info"], summary
    assert (out / "dataset" / "meta" / "info.json").is_file()


def test_lerobot_finds_the_plugins_installed_from_their_wheels(sim, outside):
    found = sim.run(["python", "-c", DISCOVERY_SNIPPET], outside, timeout=180)
    assert found.returncode == 0, found.stderr
    known = json.loads(found.stdout.strip().splitlines()[-1])
    for kind, name in PLUGIN_TYPES.items():
        assert name in known[kind], (kind, known)
