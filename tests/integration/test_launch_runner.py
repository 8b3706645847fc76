"""`lerobot-ros launch` end to end: real processes, real DDS, signals, respawn and exit status."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from sensor_msgs.msg import Image, JointState

from lerobot_ros.ros.qos import SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until
from lerobot_ros.testing.launching import Launch
from lerobot_ros.testing.process_groups import groups_gone, pid_alive

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMOKE = os.path.join(REPO, "launch", "smoke.launch.yaml")


@pytest.fixture
def launch_file(tmp_path):
    def _write(text: str) -> str:
        path = tmp_path / "t.launch.yaml"
        path.write_text(textwrap.dedent(text))
        return str(path)

    return _write


def test_failure_sets_exit_status_and_output_is_prefixed(launch_file, ros_env):
    path = launch_file("""\
        launch:
        - executable: {cmd: "sh -c 'echo oops >&2; exit 3'", name: bad}
        - executable: {cmd: "echo 'all good'", name: good}
        """)
    run = Launch([path], ros_env)
    assert run.finish() == 1
    assert "[bad] oops" in run.lines and "[good] all good" in run.lines
    assert "[launch] bad exited with status 3" in run.lines and "[launch] failed: bad" in run.lines


def test_respawn_until_max_retries(launch_file, ros_env):
    path = launch_file("""\
        launch:
        - executable:
            cmd: "sh -c 'echo run; exit 1'"
            name: flaky
            respawn: "true"
            respawn_delay: 0.1
            respawn_max_retries: 2
        """)
    run = Launch([path], ros_env)
    assert run.finish() == 1
    assert run.lines.count("[flaky] run") == 3
    assert run.lines.count("[launch] respawning flaky in 0.1 s") == 2


def test_sigint_escalates_to_sigterm_and_leaves_no_process(launch_file, ros_env):
    path = launch_file("""\
        launch:
        - executable: {cmd: "sh -c 'trap \\"\\" INT; echo ready; sleep 60; echo never'", name: stubborn,
                       sigterm_timeout: 0.5}
        - executable: {cmd: "sleep 60", name: polite}
        """)
    run = Launch([path], ros_env)
    run.wait_line(r"^\[stubborn\] ready$")
    run.wait_line(r"^\[launch\] polite started")
    pids = run.pids()
    run.proc.send_signal(signal.SIGINT)
    assert run.finish() == 0, run.text
    assert "[launch] stubborn did not stop on SIGINT, sending SIGTERM" in run.lines
    assert "[stubborn] never" not in run.lines
    assert set(pids) == {"stubborn", "polite"} and groups_gone(pids.values())


def test_sigterm_stops_everything_and_on_exit_shutdown_reports_failure(launch_file, ros_env):
    path = launch_file("""\
        launch:
        - executable: {cmd: "sh -c 'echo up; exec sleep 60'", name: sleeper}
        """)
    run = Launch([path], ros_env)
    run.wait_line(r"^\[sleeper\] up$")
    pids = run.pids()
    run.proc.send_signal(signal.SIGTERM)
    assert run.finish() == 0, run.text
    assert "[launch] stopping (signal received)" in run.lines and groups_gone([pids["sleeper"]])
    path = launch_file("""\
        launch:
        - executable: {cmd: "sleep 60", name: long}
        - executable: {cmd: "sh -c 'sleep 0.5; exit 4'", name: leader, on_exit: shutdown}
        """)
    run = Launch([path], ros_env)
    assert run.finish() == 1, run.text
    assert "[launch] leader has on_exit: shutdown; stopping everything" in run.lines
    assert "[launch] failed: leader" in run.lines and groups_gone(run.pids().values())


def test_print_and_show_args(ros_env):
    shown = subprocess.run(
        [sys.executable, "-m", "lerobot_ros.cli.main", "launch", SMOKE, "--show-args"],
        env=ros_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0
    assert "'namespace': ROS namespace of both nodes" in shown.stdout and "default: 'smoke'" in shown.stdout
    printed = subprocess.run(
        [
            sys.executable,
            "-m",
            "lerobot_ros.cli.main",
            "launch",
            "smoke",
            "namespace:=x",
            "use_listener:=false",
            "--print",
        ],
        env=ros_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert printed.returncode == 0, printed.stderr
    commands = [line for line in printed.stdout.splitlines() if not line.startswith(("#", "["))]
    assert len(commands) == 1 and "lib/lerobot_ros/talker --ros-args -r __node:=talker -r __ns:=/x" in commands[0]
    assert "listener disabled: the talker publishes on /x/follower/joint_states" in printed.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "lerobot_ros.cli.main", "launch", "no_such_file"],
        env=ros_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1 and bad.stderr.startswith("lerobot-ros launch: launch file 'no_such_file' not found")
    assert "Traceback" not in bad.stderr


@pytest.mark.slow
@pytest.mark.ros
def test_smoke_launch_nodes_namespaces_remaps_params_and_sigint(ros, ros_env):
    probe = ros.create_node("launch_probe")
    joints = MessageCollector(probe, JointState, "/probe_ns/follower/joint_states", SENSOR_QOS)
    images = MessageCollector(probe, Image, "/probe_ns/camera/image_raw", SENSOR_QOS)
    run = Launch([SMOKE, "namespace:=probe_ns", "rate_hz:=20.0", "width:=32"], ros_env)
    try:
        joints.wait_for(3, timeout=60)
        image = images.wait_for(1, timeout=60)[0]
        wait_until(
            lambda: {("talker", "/probe_ns"), ("listener", "/probe_ns")} <= set(probe.get_node_names_and_namespaces()),
            30,
            what="both nodes in the ROS graph",
        )
    finally:
        pids = run.pids()
        run.proc.send_signal(signal.SIGINT)
        code = run.finish()
    # params: width from the argument, height computed by $(eval) in the launch file
    assert (image.width, image.height) == (32, 24)
    assert image.header.frame_id == "smoke_camera_optical_frame"
    # the remap moved joint_states; nothing publishes on the unremapped name
    topics = dict(probe.get_topic_names_and_types())
    assert "/probe_ns/joint_states" not in topics
    assert code == 0, run.text
    assert set(pids) == {"talker", "listener"} and groups_gone(pids.values())


@pytest.mark.slow
@pytest.mark.ros
def test_smoke_launch_listener_shutdown_ends_the_launch(ros_env):
    run = Launch([SMOKE, "count:=5", "width:=16"], ros_env)
    code = run.finish(timeout=90)
    assert code == 0, run.text
    summary = [line for line in run.lines if line.startswith("[listener] {")]
    assert summary and '"joint_states": 5' in summary[0] and '"image_shape": [12, 16, 3]' in summary[0]
    assert "[launch] listener has on_exit: shutdown; stopping everything" in run.lines


def test_a_runner_killed_outright_takes_its_processes_along(launch_file, ros_env):
    """SIGKILL runs no clean-up in the runner; its children get SIGTERM from the kernel as it dies (ros2 launch
    leaves them running, ros2/launch#666)."""
    path = launch_file("""\
        launch:
        - executable: {cmd: "sh -c 'echo up; exec sleep 120'", name: sleeper}
        """)
    run = Launch([path], ros_env)
    run.wait_line(r"^\[sleeper\] up$")
    pid = run.pids()["sleeper"]
    assert pid_alive(pid)
    run.proc.kill()
    run.finish()
    assert groups_gone([pid]), "the runner's child outlived it"
