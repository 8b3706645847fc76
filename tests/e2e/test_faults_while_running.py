"""Faults while running: kill -9 each node of the deployed robot shape under the launcher.

`lerobot-ros launch so101_virtual record:=true` (emulated SO-101 leader and follower, robot_node and
teleop_node marked respawn, the episode recorder) records one episode while the test SIGKILLs teleop_node,
then robot_node, then (after the episode) the recorder. Each time the others keep going: the follower holds
where it is and says so on /diagnostics while its commands are gone, a node marked respawn comes back with a
new pid and its stream resumes, the recorder keeps the episode open and its QA shows the gaps (the
converter turns the episode into a dataset), and a recorder killed outright takes nothing else down.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, call_service, wait_until
from lerobot_ros.testing.datasets import contract_without_cameras, convert_recordings, recorder_count
from lerobot_ros.testing.launching import Launch
from lerobot_ros_msgs.srv import StartEpisode, StopEpisode

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

START_TIMEOUT = 300.0  # LeRobot's imports in two nodes and the emulator on a loaded 2-core machine


def _grows(collector: MessageCollector, by: int, timeout: float, what: str) -> None:
    start = len(collector.messages)
    wait_until(lambda: len(collector.messages) >= start + by, timeout, what=what)


def _kill_and_respawn(launch: Launch, label: str, timeout: float = 120.0) -> tuple[int, int]:
    old = launch.pids()[label]
    os.kill(old, signal.SIGKILL)
    wait_until(lambda: launch.pids()[label] != old, timeout, what=f"{label} respawned")
    return old, launch.pids()[label]


def test_killed_nodes_come_back_and_the_episode_keeps_the_gaps(ros, tmp_path):
    contract = contract_without_cameras("so101", tmp_path / "so101_no_cameras.yaml")
    out = tmp_path / "recordings"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    launch = Launch(
        [
            "so101_virtual",
            f"virtual_dir:={tmp_path / 'virtual'}",
            "record:=true",
            f"output_dir:={out}",
            f"contract:={contract}",
        ],
        env,
    )
    node = ros.create_node("fault_probe")
    states = MessageCollector(node, JointState, "/follower/joint_states", SENSOR_QOS)
    commands = MessageCollector(node, Float64MultiArray, "/follower/commands", SENSOR_QOS)
    diagnostics = MessageCollector(node, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
    try:
        try:
            states.wait_for(30, timeout=START_TIMEOUT)
            commands.wait_for(30, timeout=START_TIMEOUT)
        except TimeoutError:
            pytest.fail("the launch never drove the follower\n" + "\n".join(launch.lines[-40:]))
        started = call_service(node, StartEpisode, "/recorder/start_episode", StartEpisode.Request(task="faults"))
        assert started.success, started.message
        recorder_pid = launch.pids()["episode_recorder"]
        _grows(states, 30, 30, "joint states in the episode")

        # teleop_node killed: the follower holds and says why; teleop_node comes back and drives it again
        t_kill = time.monotonic()
        old, new = _kill_and_respawn(launch, "teleop")
        assert new != old
        wait_until(
            lambda: any("holding the present position" in s.message for m in diagnostics.messages for s in m.status),
            30,
            what="the follower saying it holds",
        )
        _grows(commands, 30, 120, "commands from the respawned teleop_node")
        teleop_gap = time.monotonic() - t_kill

        # robot_node killed: the arm's state stream stops, robot_node comes back on the same port, the arm
        # is where it was (the servos kept their goal), the stream resumes
        before = np.asarray(states.messages[-1].position)
        n_before = len(states.messages)
        old, new = _kill_and_respawn(launch, "robot")
        assert new != old
        _grows(states, 60, 120, "joint states from the respawned robot_node")
        recorded_at_kill = recorder_count(diagnostics, "/follower/joint_states") or 0
        wait_until(
            lambda: (recorder_count(diagnostics, "/follower/joint_states") or 0) > recorded_at_kill + 30,
            30,
            what="the recorder recording the respawned robot_node's joint states",
        )
        after = np.asarray(states.messages[n_before + 5].position)
        assert np.abs(after - before).max() < 0.15, (before, after)  # held, no jump

        # the recorder never stopped: the episode closes whole, with the gaps in its QA
        assert launch.pids()["episode_recorder"] == recorder_pid and launch.proc.poll() is None
        stopped = call_service(node, StopEpisode, "/recorder/stop_episode", StopEpisode.Request(outcome="success"))
        assert stopped.success, stopped.message
        bag = Path(stopped.bag_path)
        custom = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]["custom_data"]
        qa = json.loads(custom["qa"])["streams"]
        assert qa["/follower/joint_states"]["max_gap_ms"] >= 1000, qa["/follower/joint_states"]  # respawn_delay 2 s
        assert qa["/follower/commands"]["max_gap_ms"] >= 1000, (qa["/follower/commands"], teleop_gap)
        convert_recordings(out, contract, tmp_path / "dataset", env, repo_id="local/faults")

        # the recorder killed outright (not marked respawn): the arm and its teleoperation go on
        os.kill(recorder_pid, signal.SIGKILL)
        _grows(states, 30, 30, "joint states after the recorder died")
        _grows(commands, 30, 30, "commands after the recorder died")
        assert launch.proc.poll() is None, "\n".join(launch.lines[-40:])
    finally:
        launch.stop()
