"""lerobot_ros.testing.netns, the two-hosts harness: the link works and cuts, and nothing is left behind, also when the
body raises or an earlier run crashed (root only; CI runs as root)."""

from __future__ import annotations

import subprocess

import pytest

from lerobot_ros.testing import netns

pytestmark = pytest.mark.skipif(netns.unavailable_reason() is not None, reason=str(netns.unavailable_reason()))


def _reach(src: netns.Host, dst: netns.Host) -> bool:
    """A UDP datagram from src to dst arrives (python on both ends; no ping needed)."""
    code = (
        "import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(('0.0.0.0',47001));"
        "print('ready', flush=True); s.settimeout(3); print(s.recvfrom(64)[0].decode())"
    )
    listener = subprocess.Popen(dst.argv(["python3", "-c", code]), stdout=subprocess.PIPE, text=True)
    try:
        assert listener.stdout.readline().strip() == "ready"  # bound before the first datagram is sent
        send = (
            "import socket,time; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\nfor _ in range(20):\n"
            f" s.sendto(b'hi',('{dst.address}',47001)); time.sleep(0.1)"
        )
        subprocess.run(src.argv(["python3", "-c", send]), capture_output=True, timeout=30)
        out, _ = listener.communicate(timeout=10)
        return out.strip() == "hi"
    finally:
        listener.kill()


def test_two_hosts_link_down_up_and_removed_on_exit():
    with netns.two_hosts() as (robot, policy, link):
        names = netns.namespaces_of_this_process()
        assert sorted(names) == sorted([robot.netns, policy.netns])
        assert _reach(robot, policy)
        link.down()
        assert not _reach(robot, policy)
        link.up()
        assert _reach(policy, robot)
        assert policy.link_bytes()[0] > 0
    assert netns.namespaces_of_this_process() == []


def test_removed_when_the_body_raises_and_processes_are_stopped():
    with pytest.raises(RuntimeError, match="boom"), netns.two_hosts() as (robot, _policy, _link):
        proc = robot.popen(["sleep", "300"])
        raise RuntimeError("boom")
    assert proc.poll() is not None
    assert netns.namespaces_of_this_process() == []


def test_stale_namespaces_of_a_crashed_run_are_removed():
    dead = subprocess.Popen(["true"])
    dead.wait()
    name = f"{netns.PREFIX}{dead.pid}n0r"
    netns._ip("netns", "add", name)
    try:
        assert name in netns.clean_stale()
        assert name not in netns._ip("netns", "list").stdout
    finally:
        netns._ip("netns", "del", name, check=False)
