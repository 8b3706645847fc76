"""What crosses the secure link (from the contract, without ROS), the forwarded calls' bookkeeping, and the
HOST[:PORT] parser the link and the policy server share."""

from __future__ import annotations

import threading

import pytest

from lerobot_ros.contract import load_contract
from lerobot_ros.conventions.addresses import parse_host_port
from lerobot_ros.secure.config import EPISODE_SERVICES
from lerobot_ros.secure.routes import (
    REQUEST,
    RESPONSE,
    PendingCalls,
    link_routes,
    pack_call,
    split_service_stream,
    unpack_call,
)

ACTIONS = {
    ("/follower/commands", "std_msgs/msg/Float64MultiArray"),
    ("/follower/joint_command", "sensor_msgs/msg/JointState"),
    ("/follower/joint_trajectory", "trajectory_msgs/msg/JointTrajectory"),
}


def test_observations_go_to_the_policy_host_and_the_action_comes_back_on_any_sibling():
    contract = load_contract("so101")
    robot = link_routes(contract, "robot", list(EPISODE_SERVICES), [])
    policy = link_routes(contract, "policy", list(EPISODE_SERVICES), [])
    observations = {(f.topic, f.msg_type) for f in contract.observation_features.values()}
    assert {(r.topic, r.msg_type) for r in robot.sends} == observations
    assert {(r.topic, r.msg_type) for r in robot.receives} == ACTIONS
    assert (policy.sends, policy.receives) == (robot.receives, robot.sends)
    assert {r.qos for r in robot.receives} == {contract.action_feature.qos}


def test_a_service_crosses_as_a_request_stream_to_its_owner_and_a_response_stream_back():
    contract = load_contract("so101")
    robot = link_routes(contract, "robot", ["/recorder/start_episode:lerobot_ros_msgs/srv/StartEpisode"], [])
    policy = link_routes(contract, "policy", ["/recorder/start_episode:lerobot_ros_msgs/srv/StartEpisode"], [])
    (robot_send, robot_receive), (policy_send, policy_receive) = robot.streams(4), policy.streams(4)
    name = "/recorder/start_episode"
    assert name + RESPONSE in {s.topic for s in robot_send} and name + REQUEST in {s.topic for s in robot_receive}
    assert name + REQUEST in {s.topic for s in policy_send} and name + RESPONSE in {s.topic for s in policy_receive}
    assert {s.depth for s in robot_send if s.topic == "/follower/joint_states"} == {4}
    assert split_service_stream(name + REQUEST) == (name, REQUEST)
    assert split_service_stream("/follower/commands") == ("/follower/commands", "")
    with pytest.raises(ValueError, match="write it as /absolute/name:pkg/srv/Type"):
        link_routes(contract, "robot", ["start_episode"], [])


def test_a_call_waits_for_its_own_response_and_forgets_a_late_one():
    calls = PendingCalls()
    first, second = calls.begin(), calls.begin()
    assert first != second
    assert unpack_call(pack_call(second, b"cdr")) == (second, b"cdr")
    threading.Timer(0.05, calls.answer, (second, b"second's")).start()
    assert calls.wait(second, 5.0) == b"second's"
    assert calls.wait(first, 0.05) is None  # no response: timed out
    assert calls.answer(first, b"too late") is False  # nobody waits any more
    with pytest.raises(ValueError, match="no call id"):
        unpack_call(b"abc")


@pytest.mark.parametrize(
    ("text", "default", "parsed"),
    [
        ("127.0.0.1:8080", None, ("127.0.0.1", 8080)),
        ("[::1]:50051", None, ("::1", 50051)),
        ("10.0.0.2", 7447, ("10.0.0.2", 7447)),
        ("[fe80::1]", 7447, ("fe80::1", 7447)),
        ("robot.local:7450", 7447, ("robot.local", 7450)),
    ],
)
def test_host_and_port(text, default, parsed):
    assert parse_host_port(text, default) == parsed


@pytest.mark.parametrize(
    ("text", "default"), [("127.0.0.1", None), ("", 7447), (":8080", None), ("host:0", None), ("host:x", 7447)]
)
def test_not_a_host_and_port(text, default):
    with pytest.raises(ValueError):
        parse_host_port(text, default)
