"""Two hosts on one machine: two network namespaces joined by a veth pair (root only).

The robot and the policy run in separate namespaces, each with its own loopback and one veth end, so
DDS traffic between them crosses a real link (no shared loopback; the Fast DDS profile the processes get
has no shared-memory transport) that a test can take down and bring back (`Link.down()` / `up()`).
`two_hosts()` is a context manager: the namespaces (and with them the veth pair) and every process started
through a `Host` are removed when it exits, also on an exception or Ctrl-C. Names carry the creating pid
(`lrr<pid>n<k>...`), so concurrent runs never collide, and namespaces left by a crashed run (pid gone) are
removed on the next `two_hosts()`. The test suite and bench/remote.py share it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "lrr"
_NAME = re.compile(rf"^{PREFIX}(\d+)n(\d+)(?:[rpb]|h\d+)$")
_COUNTER = itertools.count()
#: the Fast DDS profile shipped for two real machines (UDPv4 only, sized for camera frames)
REMOTE_PROFILE = Path(sys.prefix) / "share" / "lerobot_ros" / "config" / "dds" / "fastdds_remote.xml"
#: the profile of network mode loopback (every socket on 127.0.0.1, shared memory), as the launch files set it
LOOPBACK_PROFILE = REMOTE_PROFILE.with_name("fastdds_loopback.xml")
#: what the launch files' network mode sets (launch/remote.launch.yaml)
NETWORK_ENV = (
    "FASTDDS_DEFAULT_PROFILES_FILE",
    "ROS_AUTOMATIC_DISCOVERY_RANGE",
    "ROS_STATIC_PEERS",
    "LEROBOT_ROS_NETWORK",
)


def plain_env(**extra: str) -> dict[str, str]:
    """This process's environment without any network setting (a ROS user's shell: Fast DDS defaults)."""
    env = {k: v for k, v in os.environ.items() if k not in (*NETWORK_ENV, "LEROBOT_ROS_DDS_PROFILE")}
    env.update(PYTHONUNBUFFERED="1", **extra)
    return env


def loopback_env(**extra: str) -> dict[str, str]:
    """Network mode loopback, as the robot and simulation launch files set it for every process."""
    return plain_env(
        LEROBOT_ROS_NETWORK="loopback",
        FASTDDS_DEFAULT_PROFILES_FILE=str(LOOPBACK_PROFILE),
        ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
        **extra,
    )


def json_lines(path: Path) -> list[dict]:
    """The JSON objects a probe wrote, one per line ([] before the file exists)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def log_tails(folder: Path, lines: int = 15) -> str:
    """The last lines of every *.log in `folder`, for a failure message."""
    return "\n".join(
        f"--- {p.name}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-lines:])
        for p in sorted(folder.glob("*.log"))
    )


def unavailable_reason() -> str | None:
    """Why namespaces cannot be made here (None: they can): not root, or no `ip` (iproute2)."""
    if os.geteuid() != 0:
        return "network namespaces need root (CI runs as root)"
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is missing"
    return None


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True, timeout=30)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale() -> list[str]:
    """Delete namespaces of ours whose creating process is gone; returns their names."""
    removed = []
    out = _ip("netns", "list", check=False).stdout
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        m = _NAME.match(name)
        if m and not _pid_alive(int(m.group(1))):
            _kill_namespace_processes(name)
            _ip("netns", "del", name, check=False)
            removed.append(name)
    return removed


def _kill_namespace_processes(name: str) -> None:
    pids = _ip("netns", "pids", name, check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


@dataclass
class Host:
    """One namespace: its name, veth interface and address, and the processes started in it."""

    netns: str
    ifname: str
    address: str
    procs: list = field(default_factory=list)

    def argv(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.netns, *argv]

    def popen(self, argv: list[str], env: dict | None = None, log: Path | None = None, **kwargs) -> subprocess.Popen:
        """Start `argv` in this namespace, in its own process group (stopped by `stop()` / the context exit)."""
        out = open(log, "ab") if log is not None else subprocess.DEVNULL  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(
            self.argv(argv), env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, **kwargs
        )
        proc._log_file = out  # type: ignore[attr-defined]
        self.procs.append(proc)
        return proc

    def run(self, argv: list[str], **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(argv), capture_output=True, text=True, **kwargs)

    @staticmethod
    def stop(proc: subprocess.Popen, timeout: float = 10.0) -> int | None:
        """SIGINT to the process group, then SIGKILL after `timeout`; returns the exit status."""
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        log = getattr(proc, "_log_file", None)
        if log not in (None, subprocess.DEVNULL):
            log.close()
        return proc.returncode

    def stop_all(self) -> None:
        for proc in reversed(self.procs):
            self.stop(proc)
        self.procs.clear()

    def ros_env(
        self,
        peers: list[str],
        domain_id: int | str,
        base: dict | None = None,
        profile: Path | str | None = REMOTE_PROFILE,
    ) -> dict[str, str]:
        """The environment a user sets on each real machine: same domain, subnet discovery with the other
        host as a static peer, the large-data UDP profile (None: Fast DDS's defaults)."""
        env = dict(os.environ if base is None else base)
        env.update(
            ROS_DOMAIN_ID=str(domain_id),
            ROS_AUTOMATIC_DISCOVERY_RANGE="SUBNET",
            ROS_STATIC_PEERS=";".join(peers),
            PYTHONUNBUFFERED="1",
        )
        env.pop("FASTDDS_DEFAULT_PROFILES_FILE", None)
        if profile is not None:
            if not Path(profile).is_file():
                raise FileNotFoundError(f"Fast DDS profile {profile} does not exist")
            env["FASTDDS_DEFAULT_PROFILES_FILE"] = str(profile)
        else:
            env["LEROBOT_ROS_DDS_PROFILE"] = "default"  # nodes must not apply their shared-memory profile
        return env

    def link_bytes(self) -> tuple[int, int]:
        """(rx, tx) bytes counted on this host's veth end."""
        info = json.loads(_ip("-n", self.netns, "-s", "-j", "link", "show", "dev", self.ifname).stdout)[0]
        stats = info.get("stats64") or info["stats"]
        return int(stats["rx"]["bytes"]), int(stats["tx"]["bytes"])


@dataclass
class Link:
    """The veth pair between the two hosts."""

    a: Host
    b: Host

    def down(self) -> None:
        """Cut the link (both ends down: nothing passes either way)."""
        for host in (self.a, self.b):
            _ip("-n", host.netns, "link", "set", host.ifname, "down")

    def up(self) -> None:
        for host in (self.a, self.b):
            _ip("-n", host.netns, "link", "set", host.ifname, "up")
        for host in (self.a, self.b):  # routes go with the interface: put the multicast route back
            _ip("-n", host.netns, "route", "replace", "224.0.0.0/4", "dev", host.ifname)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and not all(self._is_up(h) for h in (self.a, self.b)):
            time.sleep(0.05)

    @staticmethod
    def _is_up(host: Host) -> bool:
        info = json.loads(_ip("-n", host.netns, "-j", "link", "show", "dev", host.ifname).stdout)[0]
        return "LOWER_UP" in info.get("flags", [])


def _remove(hosts: list[Host], created: list[str]) -> None:
    """Stop each host's processes, then kill what is left in its namespace and delete the namespaces made."""
    for host in hosts:
        try:
            host.stop_all()
        finally:
            if host.netns in created:
                _kill_namespace_processes(host.netns)
                _ip("netns", "del", host.netns, check=False)


@contextlib.contextmanager
def two_hosts(subnet: str = "10.77.0"):
    """Yield (robot, policy, link): two namespaces on `subnet`.1 and .2/24 joined by a veth pair, each with
    loopback up and a multicast route on the veth (a LAN where SUBNET discovery works). Everything is
    removed on exit, whatever happened inside."""
    reason = unavailable_reason()
    if reason:
        raise RuntimeError(reason)
    clean_stale()
    tag = f"{PREFIX}{os.getpid()}n{next(_COUNTER)}"
    robot = Host(f"{tag}r", f"{tag}r", f"{subnet}.1")
    policy = Host(f"{tag}p", f"{tag}p", f"{subnet}.2")
    created: list[str] = []
    try:
        for host in (robot, policy):
            _ip("netns", "add", host.netns)
            created.append(host.netns)
        _ip("link", "add", robot.ifname, "type", "veth", "peer", "name", policy.ifname)
        for host in (robot, policy):
            try:
                _ip("link", "set", host.ifname, "netns", host.netns)
            finally:
                # an end left in the root namespace would outlive the namespaces: delete it (its peer goes too)
                if _ip("link", "show", host.ifname, check=False).returncode == 0:
                    _ip("link", "del", host.ifname, check=False)
            _ip("-n", host.netns, "addr", "add", f"{host.address}/24", "dev", host.ifname)
            _ip("-n", host.netns, "link", "set", "lo", "up")
            _ip("-n", host.netns, "link", "set", host.ifname, "up")
            _ip("-n", host.netns, "route", "add", "224.0.0.0/4", "dev", host.ifname)
        yield robot, policy, Link(robot, policy)
    finally:
        _remove([policy, robot], created)


@contextlib.contextmanager
def lan(count: int = 3, subnet: str = "10.78.0"):
    """Yield `count` hosts (namespaces on `subnet`.1, .2 ... /24, interface `lan0`) joined by one bridge, which
    lives in a namespace of its own: a LAN where any host reaches any other (the robot, the policy host and an
    intruder). Everything is removed on exit, whatever happened inside."""
    reason = unavailable_reason()
    if reason:
        raise RuntimeError(reason)
    clean_stale()
    tag = f"{PREFIX}{os.getpid()}n{next(_COUNTER)}"
    switch = f"{tag}b"
    hosts = [Host(f"{tag}h{i}", "lan0", f"{subnet}.{i + 1}") for i in range(count)]
    created: list[str] = []
    try:
        for name in [switch, *(h.netns for h in hosts)]:
            _ip("netns", "add", name)
            created.append(name)
        _ip("-n", switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", switch, "link", "set", "br0", "up")
        for i, host in enumerate(hosts):
            # both ends made inside their namespaces: no interface ever exists in the root namespace
            _ip("-n", host.netns, "link", "add", "lan0", "type", "veth", "peer", "name", f"p{i}", "netns", switch)
            _ip("-n", switch, "link", "set", f"p{i}", "master", "br0")
            _ip("-n", switch, "link", "set", f"p{i}", "up")
            _ip("-n", host.netns, "addr", "add", f"{host.address}/24", "dev", "lan0")
            _ip("-n", host.netns, "link", "set", "lo", "up")
            _ip("-n", host.netns, "link", "set", "lan0", "up")
            _ip("-n", host.netns, "route", "add", "224.0.0.0/4", "dev", "lan0")
        yield hosts
    finally:
        _remove(list(reversed(hosts)), created)
        if switch in created:
            _ip("netns", "del", switch, check=False)


def namespaces_of_this_process() -> list[str]:
    """Namespaces this process created and still holds (for tests of the clean-up)."""
    out = _ip("netns", "list", check=False).stdout
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return [n for n in names if (m := _NAME.match(n)) and int(m.group(1)) == os.getpid()]
