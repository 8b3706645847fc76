"""policy_node's logic without ROS: the tick loop (de-duplication, time jumps, start/stop, latency, side-effect
free diagnostics, run-time reconfiguration) around a real small random ACT, the output choice, the inputs,
and the reused per-tick action message."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from lerobot_ros.codecs import time_to_ns
from lerobot_ros.codecs.action import ActionEncoder
from lerobot_ros.policy.build import check_fit
from lerobot_ros.policy.config import PolicyNodeConfig as PolicyParams
from lerobot_ros.policy.inputs import check_tick_on, max_ages_ns, parse_overrides
from lerobot_ros.policy.output import action_topic, output_mode
from lerobot_ros.policy.tick_loop import ERROR, OK, WARN, RateWindow
from lerobot_ros.testing.policies import SO101_JOINTS
from lerobot_ros.testing.policy_harness import PERIOD, T0
from lerobot_ros.testing.tick_loop_harness import FRONT, STATE, Emitted, make_loop, observe


def test_ticks_skip_a_standing_clock_and_follow_it_back(setup):
    loop, _, warnings = make_loop(setup)
    emit = Emitted()
    assert loop.run(T0, emit)
    assert emit.statuses == ["gated"] and "waiting for first message" in emit.calls[0][1].reason
    assert not loop.run(T0, emit) and len(emit.calls) == 1  # paused simulation: the same time again
    observe(loop, T0 + PERIOD)
    assert loop.run(T0 + PERIOD, emit, received_wall_ns=123)
    t, result, ages, received = emit.calls[-1]
    assert result.status == "ok" and result.action.shape == (6,) and received == 123
    assert ages == {STATE: 0, FRONT: 0} and loop.tick_index == 2
    assert loop.run(T0, emit)  # time jumped back (simulator restarted): buffers cleared
    assert warnings == ["ROS time jumped back; observation buffers cleared"]
    assert emit.statuses[-1] == "held" and "waiting for first message" in emit.calls[-1][1].reason  # on_stale=hold
    assert loop.resampler.latest_time(STATE) is None
    loop.running = False
    loop.run(T0 + 5 * PERIOD, emit)
    assert emit.statuses[-1] == "stopped" and emit.calls[-1][2] is None  # no frame ages while stopped
    loop.reset()
    assert loop.last_tick_ns is None and loop.run(T0 + 5 * PERIOD, emit)  # a new episode may restart time


def test_latency_tick_info_and_rejects(setup):
    loop, _, _ = make_loop(setup)
    emit = Emitted()
    observe(loop, T0)
    loop.run(T0 + 30_000_000, emit)
    t, result, ages, _ = emit.calls[-1]
    assert loop.observation_stamp(t, ages) == T0 and loop.observation_stamp(t, None) is None
    assert loop.observation_stamp(t, {STATE: None}) is None
    assert loop.add_latency(2_500_000) == 2.5
    info = loop.tick_info(t, result, 0.0, 7, 9)
    assert (info["status"], info["published"], info["received_wall_ns"], info["published_wall_ns"]) == (
        "ok",
        True,
        7,
        9,
    )
    assert info["tick"] == loop.tick_index and not loop.tick_info(t, result, 0.0, None, None)["published"]
    loop.reject(FRONT, "image is 10x10, the contract says 48x64")
    values = loop.diagnostic_values(T0 + 100_000_000, 0.0)
    assert values[f"rejected.{FRONT}"] == "1" and "10x10" in loop.last_reject
    assert values["latency_ms_p50"] == "2.50" and values[f"staleness_ms.{STATE}"] == "100.00"


def test_reading_diagnostics_changes_nothing(setup):
    loop, _, _ = make_loop(setup)
    emit = Emitted()
    assert loop.diagnostic_values(T0, 10.0)["rate_hz"] == ""  # no window yet
    loop.next_window(10.0)
    for k in range(3):
        observe(loop, T0 + k * PERIOD, seed=k)
        loop.run(T0 + k * PERIOD, emit)
    first = loop.diagnostic_values(T0 + 3 * PERIOD, 11.5)
    assert first["rate_hz"] == "2.00" and first["ticks"] == "3" and first["published"] == "3"
    assert loop.diagnostic_values(T0 + 3 * PERIOD, 11.5) == first  # a second read: the same window
    loop.next_window(11.5)
    assert loop.diagnostic_values(T0 + 3 * PERIOD, 12.0)["rate_hz"] == "0.00"
    window = RateWindow()
    assert window.rate(1.0, 5) is None
    window.restart(1.0, 5)
    assert window.rate(1.0, 9) is None and window.rate(3.0, 9) == 2.0


def test_status_levels(setup):
    loop, _, _ = make_loop(setup)
    emit = Emitted()
    assert loop.status() == (OK, "ok")
    loop.run(T0, emit)
    assert loop.status()[0] == WARN and "waiting for first message" in loop.status()[1]  # never acted
    observe(loop, T0 + PERIOD)
    loop.run(T0 + PERIOD, emit)
    assert loop.status() == (OK, "ok")
    runner = loop.controller.runner
    runner.select_action, original = (
        (lambda *a, **k: (_ for _ in ()).throw(RuntimeError("injected"))),
        runner.select_action,
    )
    try:
        observe(loop, T0 + 2 * PERIOD)
        loop.run(T0 + 2 * PERIOD, emit)
    finally:
        runner.select_action = original
    assert loop.status() == (ERROR, "policy raised: RuntimeError: injected")
    loop.running = False
    assert loop.status() == (WARN, "stopped")


def test_a_policy_failing_in_the_inference_thread_says_so(setup):
    """Async inference: an exception in the worker thread skips that chunk; the dry ticks and /diagnostics name
    the exception (they said "waiting for the first chunk" and OK while the robot held)."""
    loop, _, _ = make_loop(setup, async_inference=True)
    worker = loop.controller.worker
    worker.predict = lambda frame, task: (_ for _ in ()).throw(RuntimeError("injected"))
    emit = Emitted()
    for k in range(3):
        observe(loop, T0 + k * PERIOD, seed=k)
        loop.run(T0 + k * PERIOD, emit)
        worker.wait_idle(30.0)
    assert worker.errors >= 1 and emit.statuses[-1] == "dry"
    assert emit.calls[-1][1].reason == "policy raised RuntimeError: injected; no chunk from that observation"
    assert loop.status() == (ERROR, "policy raised: RuntimeError: injected")


def test_async_trajectories_chain_the_change_limit_from_the_point_they_replace(setup):
    """Trajectory mode with async inference: a new trajectory replaces the previous one mid-way, so max_delta
    limits its first point against what the previous one commands at the tick before (it was limited against
    the previous one's end, still in the future: a jump of up to a whole chunk's travel)."""
    delta = 0.05
    loop, _, _ = make_loop(setup, "trajectory", async_inference=True, chunk_threshold=0.5, max_delta=[delta])
    worker, emit = loop.controller.worker, Emitted()
    sent = []  # (first tick, points) of each trajectory published
    for k in range(40):
        observe(loop, T0 + k * PERIOD, seed=k)
        loop.run(T0 + k * PERIOD, emit)
        result = emit.calls[-1][1]
        if result.trajectory is not None:
            sent.append((k + result.trajectory_offset_ticks, np.asarray(result.trajectory)))
        worker.wait_idle(30.0)
    assert len(sent) >= 3
    for (prev_start, prev), (start, points) in zip(sent, sent[1:]):
        assert prev_start < start < prev_start + len(prev), "each trajectory replaces the previous one mid-way"
        replaced = prev[start - 1 - prev_start]
        assert np.all(np.abs(points[0] - replaced) <= delta + 1e-9), (start, points[0] - replaced)
        assert np.all(np.abs(np.diff(points, axis=0)) <= delta + 1e-9)


def test_reconfigure_takes_effect_on_the_next_tick_or_refuses(setup):
    loop, p, _ = make_loop(setup)
    emit = Emitted()
    observe(loop, T0, seed=1)
    loop.run(T0, emit)
    first = emit.calls[-1][1].action
    new = dataclasses.replace(p, max_delta=[0.001])
    loop.reconfigure(new, {"max_delta": [0.001]})
    observe(loop, T0 + PERIOD, seed=2)
    loop.run(T0 + PERIOD, emit)
    second = emit.calls[-1][1]
    assert "limited change per tick" in second.reason  # the new limit clips the very next action ...
    assert np.max(np.abs(second.action - first)) <= 0.001 + 1e-12  # ... from the last published one
    controller = loop.controller
    safety = controller.safety
    with pytest.raises(ValueError, match="max_delta has 2 values for an action of 6"):
        loop.reconfigure(dataclasses.replace(p, max_delta=[1.0, 2.0]), {"max_delta": [1.0, 2.0]})
    assert controller.safety is safety  # refused: nothing changed
    with pytest.raises(ValueError, match="async mode only"):
        loop.reconfigure(dataclasses.replace(p, chunk_threshold=0.2), {"chunk_threshold": 0.2})
    with pytest.raises(ValueError, match="unknown stream"):
        loop.reconfigure(dataclasses.replace(p, max_age_overrides=["nope=5"]), {"max_age_overrides": ["nope=5"]})
    with pytest.raises(ValueError, match="device: not settable"):
        loop.reconfigure(p, {"device": "cuda"})
    new = dataclasses.replace(
        p, max_age_ms=50.0, max_age_overrides=[f"{FRONT}=20"], on_stale="nothing", task="", seed=7
    )
    loop.reconfigure(
        new,
        {"max_age_ms": 50.0, "max_age_overrides": new.max_age_overrides, "on_stale": "nothing", "task": "", "seed": 7},
    )
    assert controller.max_age_ns == {STATE: 50_000_000, FRONT: 20_000_000} and controller.on_stale == "nothing"
    assert loop.task == "pick the cube" and controller.runner.seed == 7  # "" = the contract's task
    loop.run(T0 + 10 * PERIOD, emit)  # the observations are now 900 ms old
    assert emit.statuses[-1] == "gated" and emit.calls[-1][1].action is None  # on_stale=nothing: no hold


def test_start_up_checks_name_the_setting(setup):
    contract, loaded, folder = setup
    check_fit(loaded, contract, str(folder), "c.yaml")
    with pytest.raises(ValueError, match="tick_on must be 'timer' or one of"):
        make_loop(setup, tick_on="observation.images.back")
    with pytest.raises(ValueError, match="expected 'feature=milliseconds', got 'front'"):
        PolicyParams(max_age_overrides=["front"])
    assert parse_overrides(["a = 5", "b=0.5"], "x") == {"a": 5.0, "b": 0.5}
    with pytest.raises(ValueError, match=r"unknown stream\(s\) \['c'\]"):
        max_ages_ns(["a"], 100.0, {"c": 1.0})
    assert max_ages_ns(["a", "b"], 100.0, {"b": 1.0}) == {"a": 100_000_000, "b": 1_000_000}
    assert check_tick_on("a", ["a"]) == "a"


def test_output_mode_and_topic():
    fma, js, jt = "std_msgs/msg/Float64MultiArray", "sensor_msgs/msg/JointState", "trajectory_msgs/msg/JointTrajectory"
    assert (
        output_mode("", fma) == "commands"
        and output_mode("", js) == "joint_state"
        and output_mode("", jt) == "trajectory"
    )
    assert output_mode("", "std_msgs/msg/String") == "commands"
    with pytest.raises(ValueError, match="output_mode must be one of"):
        output_mode("twist", fma)
    assert action_topic("commands", "", fma, "/arm/commands") == "/arm/commands"
    assert action_topic("trajectory", "", fma, "/arm/commands") == "/arm/joint_trajectory"
    assert action_topic("joint_state", "", fma, "/arm/commands") == "/arm/joint_command"
    assert action_topic("trajectory", "/mine", fma, "/arm/commands") == "/mine"


@pytest.mark.parametrize("mode", ["commands", "joint_state"])
def test_action_bytes_are_the_message_subscribers_get(mode):
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    enc = ActionEncoder(mode, SO101_JOINTS)
    enc.encode(np.arange(6.0), 1_500_000_000)
    raw = enc.encode([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2_000_000_001)
    assert isinstance(raw, bytes)  # what Publisher.publish sends as-is
    msg = deserialize_message(raw, Float64MultiArray if mode == "commands" else JointState)
    values = msg.data if mode == "commands" else msg.position
    assert list(values) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    if mode == "joint_state":
        assert list(msg.name) == list(SO101_JOINTS) and time_to_ns(msg.header.stamp) == 2_000_000_001
        assert list(msg.velocity) == [] and list(msg.effort) == []
        with pytest.raises(ValueError, match="has 6 joints, got 3 positions"):
            enc.encode(np.zeros(3), 0)
    else:
        dim = msg.layout.dim[0]
        assert (dim.label, dim.size, dim.stride, msg.layout.data_offset) == ("dim0", 6, 6, 0)
        third = deserialize_message(enc.encode(np.zeros((3, 1)), 0), Float64MultiArray)  # another size: its layout
        assert third.layout.dim[0].size == 3 and list(third.data) == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="no per-tick action message for mode 'trajectory'"):
        ActionEncoder("trajectory", SO101_JOINTS)
