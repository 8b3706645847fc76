"""Only this host moves the arm: the default robot launch is closed to the LAN (network mode loopback).

Two network namespaces joined by a veth pair (lerobot_ros.testing.netns, root): the robot host runs
`lerobot-ros launch so101_virtual teleop:=false` (emulated SO-101 servos, robot_node through LeRobot's Feetech
bus) and a witness with the robot's own network settings; the other host is an intruder on the LAN, once with
Fast DDS's defaults (multicast discovery) and once naming the robot as a static peer (what
ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST does not stop). Each tries for a few seconds to publish commands,
to switch the torque off through /follower/set_torque and to read joint states. With the default launch
none of it gets through; with remote:=true (mode lan, the control) the same intruders do.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from lerobot_ros.testing import netns

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(netns.unavailable_reason() is not None, reason=str(netns.unavailable_reason())),
]

ATTACK_S = 8.0
START_TIMEOUT = 300.0  # LeRobot's imports in robot_node and the emulator on a loaded 2-core machine


def _attack(robot, intruder_host, tmp: Path, remote: bool) -> tuple[dict, dict[str, dict]]:
    """Start the robot launch and the witness, then both intruders at once; returns (witness, intruders)."""
    lerobot_ros = str(Path(sys.executable).parent / "lerobot-ros")
    args = ["so101_virtual", "teleop:=false", f"virtual_dir:={tmp / 'virtual'}"]
    if remote:
        args += ["remote:=true", f"peers:={intruder_host.address}"]
    launch = robot.popen([lerobot_ros, "launch", *args], netns.plain_env(), log=tmp / "robot.log")
    if remote:
        witness_env = robot.ros_env([intruder_host.address], os.environ["ROS_DOMAIN_ID"], base=netns.plain_env())
        witness_env["LEROBOT_ROS_NETWORK"] = "lan"
    else:
        witness_env = netns.loopback_env()
    witness_out = tmp / "witness.jsonl"
    witness = robot.popen(
        [
            sys.executable,
            "-m",
            "lerobot_ros.testing.intruder",
            "witness",
            "--seconds",
            "600",
            "--out",
            str(witness_out),
        ],
        witness_env,
        log=tmp / "witness.log",
    )
    deadline = time.monotonic() + START_TIMEOUT
    while not netns.json_lines(witness_out):
        if time.monotonic() > deadline or launch.poll() is not None or witness.poll() is not None:
            pytest.fail(f"the robot launch never published joint states to its own host\n{netns.log_tails(tmp)}")
        time.sleep(0.25)
    intruders = {
        "fast_dds_defaults": netns.plain_env(),
        "static_peer": netns.plain_env(ROS_AUTOMATIC_DISCOVERY_RANGE="SUBNET", ROS_STATIC_PEERS=robot.address),
    }
    procs = {
        name: intruder_host.popen(
            [
                sys.executable,
                "-m",
                "lerobot_ros.testing.intruder",
                "intruder",
                "--seconds",
                str(ATTACK_S),
                "--out",
                str(tmp / f"{name}.jsonl"),
            ],
            env,
            log=tmp / f"{name}.log",
        )
        for name, env in intruders.items()
    }
    for proc in procs.values():
        proc.wait(120)
    robot.stop(witness)
    results = {name: netns.json_lines(tmp / f"{name}.jsonl") for name in intruders}
    seen = [x for x in netns.json_lines(witness_out) if "ready" not in x]
    assert seen and all(results.values()), netns.log_tails(tmp)
    return seen[-1], {name: lines[-1] for name, lines in results.items()}


@pytest.mark.parametrize("remote", [False, True], ids=["default_loopback", "remote_lan_control"])
def test_an_intruder_on_the_lan_neither_commands_nor_reads_the_robot(tmp_path, remote):
    with netns.two_hosts("10.79.0") as (robot, intruder_host, _link):
        witness, intruders = _attack(robot, intruder_host, tmp_path, remote)
    table = {"witness": witness, **intruders}
    print(json.dumps({"remote": remote, **table}))  # the attacker table of docs/explanation/network-security.md
    assert witness["joint_states"] > 0, table  # the robot's own host reads it
    if not remote:
        assert witness["marked_commands"] == 0, table
        for name, got in intruders.items():
            assert got["published"] > 0 and got["service_calls"] >= ATTACK_S - 1, (name, table)
            assert (got["read"], got["service_replies"]) == (0, 0), (name, table)
        robot_log = (tmp_path / "robot.log").read_text()
        assert "network: loopback (only processes of this host reach this graph" in robot_log
    else:  # the control: the same intruders get through an open graph, so the zeros above are not a blind test
        assert witness["marked_commands"] > 0, table
        for name, got in intruders.items():
            assert got["read"] > 0 and got["service_replies"] > 0, (name, table)
        assert (
            "warning: network: lan (any host on this network can publish commands"
            in (tmp_path / "robot.log").read_text()
        )
