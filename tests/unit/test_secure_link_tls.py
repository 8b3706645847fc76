"""The secure link's certificates and TLS, on loopback sockets (no DDS): the authorised pair exchanges its
streams; no certificate, another CA, a revoked host and the wrong host of the CA get nothing in; every bad
certificate file refuses to start in one line."""

from __future__ import annotations

import datetime as dt
import os
import socket
import ssl
import threading
import time

import pytest

from lerobot_ros.ros.runtime import wait_until
from lerobot_ros.secure import certs
from lerobot_ros.secure.certs import CertificateError, HostFiles, check_host_files
from lerobot_ros.secure.link import HELLO_INDEX, SecureLink, Stream, read_frame, write_frame

OBS = Stream("/follower/joint_states", "sensor_msgs/msg/JointState", depth=100)
ACT = Stream("/follower/commands", "std_msgs/msg/Float64MultiArray", depth=100)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """Our CA with hosts robot, policy, robot2 (revoked) and other; a second CA with a host named robot."""
    ours = certs.init_ca(tmp_path_factory.mktemp("ca"))
    for name in ("robot", "policy", "robot2", "other"):
        certs.issue(ours, name, ["127.0.0.1"])
    revoked_files = HostFiles.in_folder(ours, "robot2")
    keep = {p: p.read_bytes() for p in (revoked_files.cert, revoked_files.key)}
    certs.revoke(ours, "robot2")
    for path, data in keep.items():  # the revoked host still has its files (that is the attack)
        path.write_bytes(data)
        path.chmod(0o600)
    foreign = certs.init_ca(tmp_path_factory.mktemp("foreign_ca"))
    certs.issue(foreign, "robot", ["127.0.0.1"])
    return ours, foreign


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _link(role, files, port, got=None, name=None, sends=None):
    """A link on 127.0.0.1:`port`: the policy side (listening) sends ACT and takes OBS, the robot the other way;
    what it takes is appended to `got` as (topic, data)."""
    own, other = (ACT, OBS) if role == "policy" else (OBS, ACT)
    box = got if got is not None else []
    return SecureLink(
        role,
        files,
        name or role,
        "robot" if role == "policy" else "policy",
        ("127.0.0.1", port),
        sends=[sends or own],
        receives=[other],
        on_message=lambda t, d: box.append((t, d)),
        log=lambda _m: None,
    )


def _pair(ours, port, got_policy, got_robot, robot_files=None):
    """The policy side, listening, and the robot side, not started yet."""
    policy = _link("policy", HostFiles.in_folder(ours, "policy"), port, got_policy).start()
    robot = _link("robot", robot_files or HostFiles.in_folder(ours, "robot"), port, got_robot)
    return policy, robot


def _wait(pred, what: str) -> None:
    wait_until(pred, 10.0, interval=0.02, what=what)


def test_the_authorised_pair_exchanges_what_each_contract_sends(pki):
    ours, _ = pki
    got_policy, got_robot = [], []
    policy, robot = _pair(ours, _port(), got_policy, got_robot)
    robot.start()
    try:
        _wait(
            lambda: robot.connected.is_set() and policy.connected.is_set(),
            "robot.connected.is_set() and policy.connected.is_set()",
        )
        for i in range(50):
            robot.send(OBS.topic, b"state-%d" % i)
            policy.send(ACT.topic, b"action-%d" % i)
        robot.send(ACT.topic, b"not mine to send")  # a topic the robot does not send: never leaves
        _wait(lambda: len(got_policy) == 50 and len(got_robot) == 50, "len(got_policy) == 50 and len(got_robot) == 50")
        assert [d for _t, d in got_policy] == [b"state-%d" % i for i in range(50)]  # in order, none lost
        assert {t for t, _d in got_robot} == {ACT.topic}
        time.sleep(0.2)
        assert len(got_robot) == 50 and policy.stats.received[OBS.topic] == 50
    finally:
        robot.close()
        policy.close()


def _raw_tls_attempt(port: int, files: HostFiles | None, server_name="policy") -> str:
    """A client that tries the policy host's port: returns how far it got."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # an attacker does not care who the server is
    if files is not None:
        ctx.load_cert_chain(str(files.cert), str(files.key))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        try:
            with ctx.wrap_socket(raw, server_hostname=server_name) as sock:
                write_frame(
                    sock, HELLO_INDEX, b'{"protocol": 1, "host": "x", "sends": [["/follower/joint_states", "t"]]}'
                )
                write_frame(sock, 0, b"fake observation")
                index, _payload = read_frame(sock)  # TLS 1.3: a refused client certificate shows here
                return f"answered {index}"
        except (ssl.SSLError, ConnectionError, OSError) as exc:
            return f"refused: {type(exc).__name__}"


@pytest.mark.parametrize("attacker", ["no_certificate", "other_ca", "revoked", "wrong_host_of_the_ca"])
def test_an_unauthorised_client_gets_nothing_in(pki, attacker):
    ours, foreign = pki
    files = {
        "no_certificate": None,
        "other_ca": HostFiles.in_folder(foreign, "robot"),
        "revoked": HostFiles.in_folder(ours, "robot2"),
        "wrong_host_of_the_ca": HostFiles.in_folder(ours, "other"),
    }[attacker]
    port = _port()
    got_policy, got_robot = [], []
    policy, _robot = _pair(ours, port, got_policy, got_robot)
    try:
        outcome = _raw_tls_attempt(port, files)
        assert outcome.startswith("refused"), outcome
        _wait(lambda: policy.stats.rejected >= 1, "policy.stats.rejected >= 1")
        assert got_policy == [] and not policy.connected.is_set()
        assert policy.stats.connections == 0
    finally:
        policy.close()


def test_the_robot_refuses_a_server_that_is_not_the_policy_host(pki):
    """The robot connects out: a listener with the CA's certificate of another host is not the policy host."""
    ours, _ = pki
    port = _port()
    impostor = _link("policy", HostFiles.in_folder(ours, "other"), port, name="other").start()
    got: list = []
    robot = _link("robot", HostFiles.in_folder(ours, "robot"), port, got).start()
    try:
        _wait(lambda: robot.stats.rejected >= 1, "robot.stats.rejected >= 1")
        assert "hostname mismatch" in robot.stats.last_rejection or "policy" in robot.stats.last_rejection
        assert not robot.connected.is_set() and got == []
    finally:
        robot.close()
        impostor.close()


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        ("missing_cert", r"the host certificate .*hosts/robot.pem does not exist"),
        ("missing_crl", r"the revocation list .*crl.pem does not exist"),
        ("key_readable_by_others", r"is readable by others \(mode 644\): chmod 600"),
        ("not_pem", r"is not a PEM certificate"),
        ("foreign_ca", r"was not issued by the CA .* \(a foreign certificate\)"),
        ("expired", r"the host certificate expired on \d{4}-\d\d-\d\d"),
        ("revoked", r"is revoked \(serial [0-9a-f]+\)"),
        ("key_of_another_host", r"does not belong to the certificate"),
    ],
)
def test_every_bad_certificate_file_refuses_in_one_line(pki, tmp_path, breakage, message):
    ours, foreign = pki
    files = certs.host_folder(ours, "robot", tmp_path)
    now = None
    if breakage == "missing_cert":
        files.cert.unlink()
    elif breakage == "missing_crl":
        files.crl.unlink()
    elif breakage == "key_readable_by_others":
        files.key.chmod(0o644)
    elif breakage == "not_pem":
        files.cert.write_text("hello")
    elif breakage == "foreign_ca":
        files.ca.write_bytes((foreign / "ca.pem").read_bytes())
    elif breakage == "expired":
        now = dt.datetime.now(dt.UTC) + dt.timedelta(days=400)
    elif breakage == "revoked":
        files = HostFiles.in_folder(ours, "robot2")
    elif breakage == "key_of_another_host":
        files.key.write_bytes(HostFiles.in_folder(ours, "policy").key.read_bytes())
    with pytest.raises(CertificateError, match=message) as caught:
        check_host_files(files, now=now)
    assert "\n" not in str(caught.value)


def test_keys_are_private_from_the_start_and_issue_refuses_to_overwrite(pki):
    ours, _ = pki
    for path in (ours / "ca.key", HostFiles.in_folder(ours, "robot").key):
        assert os.stat(path).st_mode & 0o777 == 0o600
    with pytest.raises(CertificateError, match=r"exists: revoke it first"):
        certs.issue(ours, "robot")
    with pytest.raises(CertificateError, match=r"already holds a CA"):
        certs.init_ca(ours)
    listed = {c.name: c for c in certs.listing(ours)}
    assert listed["robot"].names == ("robot", "127.0.0.1") and not listed["robot"].revoked
    assert listed["robot2"].revoked


def test_a_revocation_reaches_a_running_link_at_the_next_connection(pki, tmp_path):
    """The CRL is read at every connection: a host revoked while the policy host runs cannot come back."""
    ours = certs.init_ca(tmp_path / "ca")
    for name in ("robot", "policy"):
        certs.issue(ours, name, ["127.0.0.1"])
    robot_files = certs.host_folder(ours, "robot", tmp_path)  # the robot's own copy of its files
    port = _port()
    got_policy, got_robot = [], []
    policy, robot = _pair(ours, port, got_policy, got_robot, robot_files=robot_files)
    robot.start()
    try:
        _wait(lambda: policy.connected.is_set(), "policy.connected.is_set()")
        certs.revoke(ours, "robot")  # the policy host's crl.pem is the CA's
        robot.close()
        _wait(lambda: not policy.connected.is_set(), "not policy.connected.is_set()")
        assert _raw_tls_attempt(port, robot_files).startswith("refused")
        threading.Event().wait(0.1)
        assert policy.stats.connections == 1
    finally:
        policy.close()


def test_a_stream_of_another_type_is_not_taken(pki):
    """The peer may only feed topics this side's contract receives, with the contract's type: a JointState topic
    offered as something else is dropped and counted, never published."""
    ours, _ = pki
    port = _port()
    got = []
    policy = _link("policy", HostFiles.in_folder(ours, "policy"), port, got).start()
    robot = _link(
        "robot", HostFiles.in_folder(ours, "robot"), port, sends=Stream(OBS.topic, "std_msgs/msg/String", 100)
    ).start()
    try:
        _wait(lambda: robot.connected.is_set(), "robot.connected.is_set()")
        for _ in range(10):
            robot.send(OBS.topic, b"not a joint state")
        _wait(lambda: policy.stats.ignored == 10, "policy.stats.ignored == 10")
        assert got == [] and policy.stats.received[OBS.topic] == 0
    finally:
        robot.close()
        policy.close()
