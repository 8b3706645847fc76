"""Which hosts may reach a node's ROS graph: the network mode every lerobot_ros node applies before rclpy.init.

A robot moves on whatever reaches its `commands` topic, and plain DDS takes that from any host of the LAN
(`ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` is only a discovery hint: the sockets stay on 0.0.0.0, and a host
that names the robot as a static peer still gets in). So the launch files set `LEROBOT_ROS_NETWORK`
(launch/remote.launch.yaml) and every node checks, before it creates a DDS participant, that the Fast DDS
profile in force really is what the mode promises; anything else refuses to start in one line, never a
silent fall-back to open DDS (Fast DDS itself runs on its defaults when its profile file is missing).

- `loopback` (the default of the robot and simulation launch files): the profile must bind every socket to
  a loopback address, with shared memory for the rest (config/dds/fastdds_loopback.xml).
- `lan` (`remote:=true`): the graph is open to the network, so the node says so with a warning; a profile
  that is named must still exist and parse.
- unset (a node started by hand): Fast DDS's defaults, as for any ROS node.
"""

from __future__ import annotations

import ipaddress
import os
import xml.etree.ElementTree as ET
from collections.abc import MutableMapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from lerobot_ros.conventions.errors import UserError

MODE_ENV = "LEROBOT_ROS_NETWORK"
PROFILE_ENV = "FASTDDS_DEFAULT_PROFILES_FILE"
_NS = "{http://www.eprosima.com}"
_SOCKET_TRANSPORTS = {"UDPv4", "UDPv6", "TCPv4", "TCPv6"}


class NetworkMode(StrEnum):
    LOOPBACK = "loopback"
    LAN = "lan"


class NetworkSetupError(UserError, RuntimeError):
    """The network mode cannot be put in force as asked: the node must not start (it would be open)."""


@dataclass(frozen=True)
class NetworkSetting:
    """The mode in force in this process and the Fast DDS profile that implements it ('' for none)."""

    mode: NetworkMode
    profile: str

    def describe(self) -> str:
        if self.mode is NetworkMode.LOOPBACK:
            return f"network: loopback (only processes of this host reach this graph; Fast DDS profile {self.profile})"
        return (
            "network: lan (any host on this network can publish commands to this robot and read its topics; "
            f"Fast DDS profile {self.profile or 'none: Fast DDS defaults'}). "
            "Use it on a network you trust only (docs: explanation/network-security)"
        )

    @property
    def is_open(self) -> bool:
        return self.mode is NetworkMode.LAN

    def diagnostic_values(self) -> dict[str, str]:
        return {"network": self.mode.value, "dds_profile": self.profile}


_current: NetworkSetting | None = None


def current() -> NetworkSetting | None:
    """The setting `apply_network_mode` put in force in this process (None: none was asked for)."""
    return _current


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.strip()).is_loopback
    except ValueError:
        return address.strip() == "localhost"


def _text(element: ET.Element | None) -> str:
    return (element.text or "").strip() if element is not None else ""


def _default_participant(root: ET.Element) -> ET.Element | None:
    for participant in root.iter(f"{_NS}participant"):
        if participant.get("is_default_profile", "").lower() == "true":
            return participant
    return None


def open_sockets(root: ET.Element) -> list[str]:
    """What in a parsed profile would let another host in (empty: everything stays on this host)."""
    participant = _default_participant(root)
    if participant is None:
        return ['no participant profile is marked is_default_profile="true" (Fast DDS would use its defaults)']
    problems = []
    if _text(participant.find(f"{_NS}rtps/{_NS}useBuiltinTransports")).lower() != "false":
        problems.append("useBuiltinTransports is not false (the built-in UDP transport listens on every interface)")
    descriptors = {_text(d.find(f"{_NS}transport_id")): d for d in root.iter(f"{_NS}transport_descriptor")}
    for tid in participant.iter(f"{_NS}transport_id"):
        name = _text(tid)
        descriptor = descriptors.get(name)
        if descriptor is None:
            problems.append(f"transport {name!r} has no transport_descriptor")
            continue
        kind = _text(descriptor.find(f"{_NS}type"))
        if kind == "SHM":
            continue
        if kind not in _SOCKET_TRANSPORTS:
            problems.append(f"transport {name!r} is of type {kind!r} (loopback mode knows SHM, UDP and TCP)")
            continue
        allowed = [_text(a) for a in descriptor.iterfind(f"{_NS}interfaceWhiteList/{_NS}address")]
        if not allowed:
            problems.append(f"{kind} transport {name!r} has no interfaceWhiteList (it binds every interface)")
        problems += [f"{kind} transport {name!r} allows {a}" for a in allowed if not _is_loopback(a)]
    # locators and peers named in the participant itself must be loopback too
    problems += [
        f"the participant names address {_text(a)}"
        for a in participant.iter(f"{_NS}address")
        if _text(a) and not _is_loopback(_text(a))
    ]
    return problems


def check_profile(path: str | os.PathLike[str], mode: NetworkMode) -> ET.Element:
    """Read and parse the profile; in loopback mode also check that no socket reaches past this host."""
    where = f"network {mode.value}: the Fast DDS profile {path} ({PROFILE_ENV})"
    refuse = "refusing to start a node the network could reach"
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        raise NetworkSetupError(f"{where} does not exist; {refuse} (reinstall lerobot_ros or fix the path)") from None
    except OSError as exc:
        raise NetworkSetupError(f"{where} cannot be read ({exc.strerror}); {refuse}") from None
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise NetworkSetupError(f"{where} is not valid XML ({exc}); {refuse}") from None
    if mode is NetworkMode.LOOPBACK:
        problems = open_sockets(root)
        if problems:
            raise NetworkSetupError(f"{where} is not loopback-only: {'; '.join(problems)}; {refuse}")
    return root


def apply_network_mode(env: MutableMapping[str, str] | None = None) -> NetworkSetting | None:
    """Check and put in force the mode named by LEROBOT_ROS_NETWORK in `env` (default os.environ); call
    before rclpy.init. Returns the setting, or None when no mode is asked for."""
    global _current
    env = os.environ if env is None else env
    raw = env.get(MODE_ENV, "").strip()
    if not raw:
        return None
    try:
        mode = NetworkMode(raw.lower())
    except ValueError:
        choices = ", ".join(m.value for m in NetworkMode)
        raise NetworkSetupError(f"{MODE_ENV}={raw!r} is not a network mode: use one of {choices}") from None
    profile = env.get(PROFILE_ENV, "").strip()
    if mode is NetworkMode.LOOPBACK:
        rmw = env.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        if rmw != "rmw_fastrtps_cpp":
            raise NetworkSetupError(
                f"network loopback is a Fast DDS profile, but RMW_IMPLEMENTATION={rmw}: "
                "unset RMW_IMPLEMENTATION, or restrict that middleware yourself and start with remote:=true"
            )
        if not profile:
            raise NetworkSetupError(
                f"network loopback: {PROFILE_ENV} is not set, so Fast DDS would listen on every interface; "
                "refusing to start a node the network could reach (start it from a lerobot_ros launch file)"
            )
        check_profile(profile, mode)
        env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
        env.pop("ROS_STATIC_PEERS", None)
    elif profile:
        check_profile(profile, mode)
    _current = NetworkSetting(mode, profile)
    return _current
