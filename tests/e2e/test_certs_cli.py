"""`lerobot-ros certs` (a CA, host certificates, revocation) and secure_link_node refusing bad certificates
before it touches the network: each in one line, exit 1, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lerobot_ros.testing import netns

BIN = Path(sys.executable).parent


def _certs(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "lerobot-ros"), "certs", *args], capture_output=True, text=True, timeout=120)


def test_init_issue_list_revoke(tmp_path):
    ca = tmp_path / "ca"
    done = _certs("init", "--certs_dir", str(ca))
    assert done.returncode == 0 and "CA created in" in done.stdout, done.stderr
    assert oct((ca / "ca.key").stat().st_mode & 0o777) == "0o600"
    done = _certs("issue", "robot", "--certs_dir", str(ca), "--address", "192.168.1.10", "--address", "robot.local")
    assert done.returncode == 0 and "copy to that host's certs folder: ca.pem, crl.pem, hosts/robot.pem" in done.stdout
    listed = _certs("list", "--certs_dir", str(ca)).stdout.splitlines()
    assert listed[1].split()[0] == "robot" and "no" in listed[1] and "robot, robot.local, 192.168.1.10" in listed[1]
    done = _certs("revoke", "robot", "--certs_dir", str(ca))
    assert done.returncode == 0 and "copy the new crl.pem to every host" in done.stdout
    assert " yes " in _certs("list", "--certs_dir", str(ca)).stdout.splitlines()[1]
    for args, message in [
        (("init",), "already holds a CA"),
        (("issue",), "certs issue needs the host's name"),
        (("revoke", "nobody"), "host nobody's certificate"),
    ]:
        done = _certs(*args, "--certs_dir", str(ca))
        assert done.returncode == 1 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and done.stderr.strip().count("\n") == 0


def _link_node(**params: str) -> subprocess.CompletedProcess:
    """secure_link_node in network mode loopback (as a launch file starts it), run until it ends."""
    args = [str(BIN / "secure_link_node"), "--ros-args"]
    for name, value in params.items():
        args += ["-p", f"{name}:={value}"]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=netns.loopback_env())


@pytest.mark.parametrize("case", ["no_certificates", "key_readable_by_others"])
def test_the_link_node_refuses_bad_certificates_before_any_network(tmp_path, case):
    certs_dir = tmp_path / "certs"
    if case == "key_readable_by_others":
        assert _certs("init", "--certs_dir", str(certs_dir)).returncode == 0
        assert _certs("issue", "robot", "--certs_dir", str(certs_dir)).returncode == 0
        (certs_dir / "hosts" / "robot.key").chmod(0o644)
    done = _link_node(role="robot", address="10.0.0.2", certs_dir=str(certs_dir))
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    expected = "does not exist" if case == "no_certificates" else "is readable by others (mode 644): chmod 600"
    assert errors[0].startswith("[SecureLinkNode] error: secure link: ") and expected in errors[0], errors


def test_the_link_node_says_when_its_port_is_taken(tmp_path):
    import socket

    certs_dir = tmp_path / "certs"
    assert _certs("init", "--certs_dir", str(certs_dir)).returncode == 0
    assert _certs("issue", "policy", "--certs_dir", str(certs_dir)).returncode == 0
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = _link_node(role="policy", address=f"127.0.0.1:{port}", certs_dir=str(certs_dir))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"secure link: cannot listen on 127.0.0.1:{port}: [Errno 98] Address already in use" in done.stderr
