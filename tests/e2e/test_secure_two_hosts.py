"""Robot and policy host over the secure link, with an intruder on the same LAN (three network namespaces
joined by a bridge: lerobot_ros.testing.netns.lan, root).

Robot host: `lerobot-ros launch so101_virtual teleop:=false record:=true secure:=true peers:=<policy host>`
(emulated SO-101 servos, robot_node through LeRobot's Feetech bus, the episode recorder, secure_link_node
connecting out), every node loopback-only. An operator on the policy host records an episode on the robot host
through the recorder's services, which the link forwards.
Policy host: `lerobot-ros launch policy secure:=true` (secure_link_node listening) and a stand-in policy that
answers each joint state with a command holding it: the policy loop runs across the link. A witness on each host
counts what arrives there. The intruder tries, while the loop runs: DDS with Fast DDS's defaults and with both
hosts as static peers (commands, torque calls, fake observations, reads), then the link's port with no
certificate, a certificate of another CA, a revoked host's certificate, the CA's certificate of another host,
and another CA's certificate from the robot's own address (spoofed). Nothing of it gets in or out.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from lerobot_ros.secure import certs
from lerobot_ros.secure.certs import HostFiles
from lerobot_ros.testing import netns

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(netns.unavailable_reason() is not None, reason=str(netns.unavailable_reason())),
]

SUBNET = "10.81.0"
ATTACK_S = 8.0
START_TIMEOUT = 300.0


def _module(role: str, out: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "lerobot_ros.testing.intruder", role, "--out", str(out), *args]


def test_only_the_authorised_pair_talks_over_the_secure_link(tmp_path):
    ca = certs.init_ca(tmp_path / "ca")
    certs.issue(ca, "robot", [f"{SUBNET}.1"])
    certs.issue(ca, "policy", [f"{SUBNET}.2"])
    certs.issue(ca, "laptop", [f"{SUBNET}.3"])  # a host of the CA, but not the robot
    certs.issue(ca, "old_robot", [f"{SUBNET}.3"])
    old = HostFiles.in_folder(ca, "old_robot")
    kept = {p: p.read_bytes() for p in (old.cert, old.key)}
    certs.revoke(ca, "old_robot")
    for path, data in kept.items():  # the revoked host still has its files
        path.write_bytes(data)
        path.chmod(0o600)
    foreign = certs.init_ca(tmp_path / "foreign_ca")
    certs.issue(foreign, "robot", [f"{SUBNET}.1"])
    robot_certs = certs.host_folder(ca, "robot", tmp_path / "robot_certs").ca.parent
    policy_certs = certs.host_folder(ca, "policy", tmp_path / "policy_certs").ca.parent
    lerobot_ros = str(Path(sys.executable).parent / "lerobot-ros")

    with netns.lan(3, SUBNET) as (robot, policy, intruder):
        robot.popen(
            [
                lerobot_ros,
                "launch",
                "so101_virtual",
                "teleop:=false",
                f"virtual_dir:={tmp_path / 'virtual'}",
                "secure:=true",
                f"peers:={policy.address}",
                f"certs_dir:={robot_certs}",
                "record:=true",
                f"output_dir:={tmp_path / 'recordings'}",
            ],
            netns.plain_env(),
            log=tmp_path / "robot.log",
        )
        policy.popen(
            [lerobot_ros, "launch", "policy", "secure:=true", f"certs_dir:={policy_certs}"],
            netns.plain_env(),
            log=tmp_path / "policy.log",
        )
        out = {name: tmp_path / f"{name}.jsonl" for name in ("robot_witness", "policy_witness", "holder")}
        witnesses = [
            robot.popen(
                _module("witness", out["robot_witness"], "--seconds", "600"),
                netns.loopback_env(),
                log=tmp_path / "rw.log",
            ),
            policy.popen(
                _module("witness", out["policy_witness"], "--seconds", "600"),
                netns.loopback_env(),
                log=tmp_path / "pw.log",
            ),
            policy.popen(
                _module("holder", out["holder"], "--seconds", "600"), netns.loopback_env(), log=tmp_path / "holder.log"
            ),
        ]
        deadline = time.monotonic() + START_TIMEOUT
        while not (netns.json_lines(out["robot_witness"]) and netns.json_lines(out["policy_witness"])):
            if time.monotonic() > deadline or any(p.poll() is not None for p in robot.procs + policy.procs):
                pytest.fail(
                    f"the policy host never saw the robot's joint states over the link\n{netns.log_tails(tmp_path)}"
                )
            time.sleep(0.25)

        # the recorder's services cross the link: an episode recorded on the robot, started from the policy host
        operator = policy.run(
            _module("operator", tmp_path / "operator.jsonl", "--seconds", "60"), env=netns.loopback_env(), timeout=180
        )
        assert operator.returncode == 0, operator.stderr[-2000:]
        # DDS intruders while the loop runs: Fast DDS defaults, and both hosts as static peers
        dds = {
            "dds_defaults": netns.plain_env(),
            "dds_static_peers": netns.plain_env(
                ROS_AUTOMATIC_DISCOVERY_RANGE="SUBNET", ROS_STATIC_PEERS=f"{robot.address};{policy.address}"
            ),
        }
        procs = [
            intruder.popen(
                _module("intruder", tmp_path / f"{name}.jsonl", "--seconds", str(ATTACK_S)),
                env,
                log=tmp_path / f"{name}.log",
            )
            for name, env in dds.items()
        ]
        # TLS intruders at the policy host's link port (the robot listens on nothing)
        tls = {
            "tls_no_certificate": ("", ""),
            "tls_other_ca": (
                str(HostFiles.in_folder(foreign, "robot").cert),
                str(HostFiles.in_folder(foreign, "robot").key),
            ),
            "tls_revoked_host": (str(old.cert), str(old.key)),
            "tls_other_host_of_the_ca": (
                str(HostFiles.in_folder(ca, "laptop").cert),
                str(HostFiles.in_folder(ca, "laptop").key),
            ),
        }
        targets = dict.fromkeys(tls, f"{policy.address}:7447")
        tls["tls_robot_port"] = ("", "")
        targets["tls_robot_port"] = f"{robot.address}:7447"
        for name, (cert, key) in tls.items():
            intruder.run(
                _module(
                    "tls_intruder", tmp_path / f"{name}.jsonl", "--target", targets[name], "--cert", cert, "--key", key
                ),
                env=netns.plain_env(),
                timeout=60,
            )
        for proc in procs:
            proc.wait(120)
        # last, another CA's certificate from the robot's own address (it may confuse ARP for a moment)
        intruder.run(["ip", "addr", "add", f"{robot.address}/32", "dev", "lan0"], timeout=10)
        spoof = (
            "import socket, ssl, json, sys; from lerobot_ros.testing.intruder import tls_intruder; "
            "s=socket.socket; orig=socket.create_connection; "
            "socket.create_connection=lambda a, timeout=None: orig(a, timeout, (sys.argv[1], 0)); "
            "tls_intruder(sys.argv[2], sys.argv[3], sys.argv[4], __import__('pathlib').Path(sys.argv[5]))"
        )
        f = HostFiles.in_folder(foreign, "robot")
        intruder.run(
            [
                sys.executable,
                "-c",
                spoof,
                robot.address,
                f"{policy.address}:7447",
                str(f.cert),
                str(f.key),
                str(tmp_path / "tls_spoofed_robot_address.jsonl"),
            ],
            env=netns.plain_env(),
            timeout=60,
        )
        for proc in witnesses:
            robot.stop(proc) if proc in robot.procs else policy.stop(proc)
        policy_log = (tmp_path / "policy.log").read_text()

    table = {
        name: netns.json_lines(tmp_path / f"{name}.jsonl")[-1:]
        for name in [*out, *dds, *tls, "tls_spoofed_robot_address"]
    }
    print(json.dumps(table))
    robot_seen = [x for x in netns.json_lines(out["robot_witness"]) if "ready" not in x][-1]
    policy_seen = [x for x in netns.json_lines(out["policy_witness"]) if "ready" not in x][-1]
    holder = netns.json_lines(out["holder"])[-1]
    # the authorised loop ran across the link: observations to the policy host, its commands back to the robot
    assert policy_seen["joint_states"] > 30 and holder["commands"] > 30, table
    assert robot_seen["commands"] > 30, table
    # nothing of the intruders reached either host, nothing of the hosts reached them
    assert robot_seen["marked_commands"] == 0 and policy_seen["marked_commands"] == 0, table
    assert robot_seen["marked_joint_states"] == 0 and policy_seen["marked_joint_states"] == 0, table
    for name in dds:
        got = table[name][0]
        assert got["published"] > 0 and (got["read"], got["service_replies"]) == (0, 0), (name, table)
    for name in [*tls, "tls_spoofed_robot_address"]:
        assert table[name] and table[name][0]["outcome"].startswith("refused"), (name, table)
    # the four TLS intruders that reached the port were refused by the link itself (the spoofed one gets no TCP
    # connection: the policy host answers the real robot's address)
    assert policy_log.count("secure link: refused or failed") >= 4, policy_log[-3000:]
    assert "secure link: connected to robot (TLS 1.3, mutual certificates)" in policy_log
    episode = netns.json_lines(tmp_path / "operator.jsonl")[-1]
    assert episode["started"] == {"success": True, "index": 0} and episode["stopped"]["success"], episode
    bag = Path(episode["stopped"]["bag_path"])
    assert bag == tmp_path / "recordings" / "episode_000000" and (bag / "metadata.yaml").is_file()
