"""The network mode a node checks before it joins DDS: loopback refuses any profile that reaches past this host
(missing, unreadable, not XML, built-in transports, a socket or an address beyond loopback); lan warns."""

from __future__ import annotations

from pathlib import Path

import pytest

from lerobot_ros.ros import network
from lerobot_ros.ros.dds import PROFILE as LARGE_DATA_PROFILE
from lerobot_ros.ros.network import NetworkMode, NetworkSetupError, apply_network_mode, check_profile

DDS = Path(__file__).resolve().parents[2] / "config" / "dds"
LOOPBACK = DDS / "fastdds_loopback.xml"


@pytest.fixture(autouse=True)
def _no_setting_left(monkeypatch):
    monkeypatch.setattr(network, "_current", None)


def _loopback_variant(tmp_path: Path, old: str, new: str) -> Path:
    text = LOOPBACK.read_text()
    assert old in text
    path = tmp_path / "variant.xml"
    path.write_text(text.replace(old, new))
    return path


def test_the_shipped_loopback_profile_passes_and_the_mode_narrows_discovery():
    env = {"LEROBOT_ROS_NETWORK": "loopback", "FASTDDS_DEFAULT_PROFILES_FILE": str(LOOPBACK)}
    env["ROS_STATIC_PEERS"] = "10.0.0.2"
    setting = apply_network_mode(env)
    assert setting is not None and setting.mode is NetworkMode.LOOPBACK and not setting.is_open
    assert env["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST" and "ROS_STATIC_PEERS" not in env
    assert network.current() == setting
    assert setting.diagnostic_values() == {"network": "loopback", "dds_profile": str(LOOPBACK)}
    assert "only processes of this host" in setting.describe()


def test_no_mode_asked_for_leaves_everything_as_it_was():
    env = {"FASTDDS_DEFAULT_PROFILES_FILE": "/nowhere.xml"}
    assert apply_network_mode(env) is None
    assert env == {"FASTDDS_DEFAULT_PROFILES_FILE": "/nowhere.xml"} and network.current() is None


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"LEROBOT_ROS_NETWORK": "open"},
            r"LEROBOT_ROS_NETWORK='open' is not a network mode: use one of loopback, lan",
        ),
        ({"LEROBOT_ROS_NETWORK": "loopback"}, r"FASTDDS_DEFAULT_PROFILES_FILE is not set, so Fast DDS would listen"),
        (
            {"LEROBOT_ROS_NETWORK": "loopback", "FASTDDS_DEFAULT_PROFILES_FILE": "/no/such/profile.xml"},
            r"profile /no/such/profile.xml \(FASTDDS_DEFAULT_PROFILES_FILE\) does not exist; refusing to start",
        ),
        (
            {"LEROBOT_ROS_NETWORK": "lan", "FASTDDS_DEFAULT_PROFILES_FILE": "/no/such/profile.xml"},
            r"network lan: .* does not exist",
        ),
        (
            {
                "LEROBOT_ROS_NETWORK": "loopback",
                "FASTDDS_DEFAULT_PROFILES_FILE": str(LOOPBACK),
                "RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp",
            },
            r"RMW_IMPLEMENTATION=rmw_cyclonedds_cpp",
        ),
    ],
)
def test_a_mode_that_cannot_be_put_in_force_refuses_in_one_line(env, message):
    with pytest.raises(NetworkSetupError, match=message) as caught:
        apply_network_mode(env)
    assert "\n" not in str(caught.value) and network.current() is None


def test_an_unreadable_or_broken_profile_is_refused(tmp_path):
    with pytest.raises(NetworkSetupError, match=r"cannot be read"):
        check_profile(tmp_path, NetworkMode.LOOPBACK)  # a folder: reading fails
    broken = tmp_path / "broken.xml"
    broken.write_text(LOOPBACK.read_text()[:300])
    with pytest.raises(NetworkSetupError, match=r"is not valid XML"):
        check_profile(broken, NetworkMode.LAN)


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("<address>127.0.0.1</address>", "<address>192.168.1.5</address>", "allows 192.168.1.5"),
        ("<address>127.0.0.1</address>", "<address>0.0.0.0</address>", "allows 0.0.0.0"),
        (
            "<interfaceWhiteList>\n          <address>127.0.0.1</address>\n        </interfaceWhiteList>",
            "",
            "has no interfaceWhiteList (it binds every interface)",
        ),
        (
            "<useBuiltinTransports>false</useBuiltinTransports>",
            "<useBuiltinTransports>true</useBuiltinTransports>",
            "useBuiltinTransports is not false",
        ),
        ('is_default_profile="true"', 'is_default_profile="false"', "no participant profile is marked"),
        (
            "<useBuiltinTransports>",
            "<builtin><initialPeersList><locator><udpv4><address>10.0.0.9</address></udpv4></locator>"
            "</initialPeersList></builtin><useBuiltinTransports>",
            "the participant names address 10.0.0.9",
        ),
        (
            "<transport_id>lerobot_ros_loopback_udp</transport_id>\n        </userTransports>",
            "<transport_id>lerobot_ros_loopback_udp</transport_id><transport_id>extra</transport_id></userTransports>",
            "transport 'extra' has no transport_descriptor",
        ),
    ],
)
def test_a_profile_that_reaches_past_loopback_is_refused_naming_why(tmp_path, old, new, problem):
    path = _loopback_variant(tmp_path, old, new)
    env = {"LEROBOT_ROS_NETWORK": "loopback", "FASTDDS_DEFAULT_PROFILES_FILE": str(path)}
    with pytest.raises(NetworkSetupError, match=r"is not loopback-only: ") as caught:
        apply_network_mode(env)
    assert problem in str(caught.value)
    assert "ROS_AUTOMATIC_DISCOVERY_RANGE" not in env  # nothing was put in force


@pytest.mark.parametrize("profile", [DDS / "fastdds_remote.xml", "large_data"])
def test_the_other_shipped_profiles_are_not_loopback_only(tmp_path, profile):
    if profile == "large_data":
        profile = tmp_path / "large_data.xml"
        profile.write_text(LARGE_DATA_PROFILE)
    with pytest.raises(NetworkSetupError, match=r"has no interfaceWhiteList"):
        check_profile(profile, NetworkMode.LOOPBACK)
    check_profile(profile, NetworkMode.LAN)  # fine for lan: it only has to exist and parse


def test_lan_is_open_and_says_so():
    setting = apply_network_mode(
        {"LEROBOT_ROS_NETWORK": "LAN", "FASTDDS_DEFAULT_PROFILES_FILE": str(DDS / "fastdds_remote.xml")}
    )
    assert setting is not None and setting.is_open
    assert "any host on this network can publish commands to this robot" in setting.describe()
    assert apply_network_mode({"LEROBOT_ROS_NETWORK": "lan"}).profile == ""  # Fast DDS defaults: allowed, still open
