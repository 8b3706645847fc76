"""Human corrections over a running policy (LeRobot's DAgger phases): the arbiter's state machine and handovers
(library, no ROS), and a takeover with the emulated SO-101 leader over a running ACT policy_node on the MuJoCo
twin: frames tagged, the policy paused and resumed, no jump larger than max_delta at either handover."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from lerobot_ros.teleop.takeover import TRANSITIONS, Event, Phase, Takeover

VENV_BIN = os.path.dirname(sys.executable)


@pytest.mark.slow  # imports LeRobot's rollout stack (torch, datasets)
def test_phases_and_events_are_lerobots():
    from lerobot.rollout.strategies import dagger

    theirs = {(p.value, e): n.value for (p, e), n in dagger._DAGGER_TRANSITIONS.items()}
    ours = {(p.value, e.value): n.value for (p, e), n in TRANSITIONS.items()}
    assert ours == theirs


def test_policy_passes_through_then_pause_holds_and_drops_policy_targets():
    t = Takeover(max_delta=0.1)
    assert t.tick(0.0).target is None  # nothing heard yet: nothing to send
    t.on_policy([0.5, -0.5])
    out = t.tick(0.0)
    assert np.allclose(out.target, [0.5, -0.5]) and not out.intervention and out.phase is Phase.AUTONOMOUS
    assert t.request(Event.PAUSE_RESUME, 0.1).accepted
    t.on_policy([3.0, 3.0])  # the policy keeps talking while paused: dropped
    out = t.tick(0.1)
    assert np.allclose(out.target, [0.5, -0.5]) and not out.intervention and out.phase is Phase.PAUSED


def test_targets_of_another_size_are_refused_and_change_nothing():
    """A teleop for another arm (or an empty message) made the handover slide fail to broadcast in the timer, which
    ended the node with a traceback; it is refused with why, the arbiter goes on."""
    t = Takeover(max_delta=0.1)
    t.on_policy([0.5, -0.5])
    with pytest.raises(ValueError, match=r"^the teleop's target has 3 values, the arm 2: dropped"):
        t.on_teleop([0.0, 0.0, 0.0], 0.0)
    with pytest.raises(ValueError, match=r"^the policy's target has 0 values"):
        t.on_policy([])
    assert t.teleop is None and np.allclose(t.tick(0.0).target, [0.5, -0.5])


def test_correction_needs_a_heard_teleop_and_says_why():
    t = Takeover(teleop_timeout_s=0.5)
    t.on_policy([0.0])
    t.tick(0.0)
    no = t.request("correction", 0.0)
    assert not no.accepted and no.phase is Phase.AUTONOMOUS and "pause first" in no.reason
    t.request("pause_resume", 0.0)
    no = t.request("correction", 1.0)
    assert not no.accepted and no.phase is Phase.PAUSED
    assert no.reason.startswith("correction refused: no teleop target yet") and "stays paused" in no.reason
    t.on_teleop([0.2], 1.0)
    stale = t.request("correction", 2.0)
    assert not stale.accepted and "no teleop target for 1.0 s (limit 0.5 s)" in stale.reason
    t.on_teleop([0.2], 2.0)
    assert t.request("correction", 2.1).accepted and t.phase is Phase.CORRECTING


def _steps(targets) -> np.ndarray:
    return np.abs(np.diff(np.asarray(targets), axis=0))


def test_both_handovers_slide_at_max_delta_and_tag_the_person():
    t = Takeover(max_delta=np.array([0.1, 0.05]))
    t.on_policy([0.0, 0.0])
    sent = [t.tick(0.0).target]
    t.request("pause_resume", 0.0)
    t.on_teleop([1.0, -1.0], 0.0)
    t.request("correction", 0.0)
    flags = []
    for i in range(30):
        t.on_teleop([1.0, -1.0], 0.01 * i)
        out = t.tick(0.01 * i)
        sent.append(out.target)
        flags.append(out.intervention)
    assert np.allclose(sent[-1], [1.0, -1.0]) and all(flags)
    assert np.all(_steps(sent) <= [0.1 + 1e-12, 0.05 + 1e-12])  # slid, not jumped
    t.request("correction", 0.4)
    assert not t.tick(0.4).intervention  # paused again: holds the person's last target
    t.request("pause_resume", 0.5)
    assert np.allclose(t.tick(0.5).target, [1.0, -1.0])  # no policy target since the resume: hold
    for i in range(40):
        t.on_policy([0.0, 0.0])
        sent.append(t.tick(0.5 + 0.01 * i).target)
    assert np.allclose(sent[-1], [0.0, 0.0]) and np.all(_steps(sent) <= [0.1 + 1e-12, 0.05 + 1e-12])


def test_a_teleop_that_goes_silent_mid_correction_holds():
    t = Takeover(teleop_timeout_s=0.2)
    t.on_policy([0.0])
    t.tick(0.0)
    t.request("pause_resume", 0.0)
    t.on_teleop([0.01], 0.0)
    t.request("correction", 0.0)
    assert np.allclose(t.tick(0.05).target, [0.01])
    t.on_teleop([0.02], 0.1)
    assert np.allclose(t.tick(0.1).target, [0.02])
    assert np.allclose(t.tick(0.5).target, [0.02]) and t.tick(0.5).intervention  # silent: held, still the person's


# ---- over DDS: emulated leader, ACT policy_node, the twin ------------------------------------
@pytest.fixture
def small_contract(tmp_path) -> Path:
    from lerobot_ros.contract.loader import resolve

    data = yaml.safe_load(resolve("so101_sim").read_text())
    image = data["features"]["observation.images.front"]
    image["shape"], image["transforms"] = [48, 64, 3], [{"resize": [48, 64]}]
    out = tmp_path / "so101_sim_small.yaml"
    out.write_text(yaml.safe_dump(data))
    return out


def _spawn(argv, env, log: Path) -> subprocess.Popen:
    return subprocess.Popen(argv, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_takeover_with_the_emulated_leader_over_act_on_the_twin(ros, ros_env, tmp_path, small_contract):
    from rclpy.parameter import Parameter
    from std_msgs.msg import Bool, Float64MultiArray
    from std_srvs.srv import Trigger

    from lerobot_ros.nodes.sim_bridge_node import SimBridgeNode
    from lerobot_ros.nodes.takeover_node import TakeoverNode
    from lerobot_ros.ros.qos import LATCHED_QOS, RECORDING_QOS
    from lerobot_ros.ros.runtime import MessageCollector, wait_until
    from lerobot_ros.testing.policies import make_policy_folder

    policy_dir = make_policy_folder(tmp_path / "act", cameras={"front": (48, 64)})
    vdir = tmp_path / "virtual"
    procs = [
        _spawn(
            [os.path.join(VENV_BIN, "lerobot-ros"), "virtual-arm", "so101", "--output_dir", str(vdir)],
            ros_env,
            tmp_path / "arm.log",
        ),
        _spawn(
            [
                os.path.join(VENV_BIN, "policy_node"),
                "--ros-args",
                "-r",
                "__node:=policy",
                "-p",
                f"policy.path:={policy_dir}",
                "-p",
                f"contract:={small_contract}",
                "-p",
                "action_topic:=/sim/policy/commands",
                "-p",
                "policy.device:=cpu",
                "-p",
                "use_sim_time:=true",
            ],
            ros_env,
            tmp_path / "policy.log",
        ),  # the twin stamps in sim time
    ]
    bridge = SimBridgeNode(
        context=ros.context,
        namespace="/sim",
        parameter_overrides=[
            Parameter("env.type", value="so101"),
            Parameter("mode", value="realtime"),
            Parameter("fps", value=30.0),
            Parameter("cameras", Parameter.Type.STRING_ARRAY, ["front"]),
            Parameter("env.observation_width", value=64),
            Parameter("env.observation_height", value=48),
            Parameter("antialias", value=False),
            Parameter("publish_clock", value=True),
            Parameter("env.episode_length", value=100000),
        ],
    )
    ros.add_node(bridge)
    max_delta = 0.05
    takeover = TakeoverNode(
        context=ros.context,
        namespace="/sim",
        parameter_overrides=[Parameter("max_delta", value=max_delta), Parameter("policy_node", value="/policy")],
    )
    ros.add_node(takeover)
    probe = ros.create_node("probe")
    commands = MessageCollector(
        probe, Float64MultiArray, "/sim/commands", RECORDING_QOS
    )  # deep: a step is between consecutive commands, none skipped
    policy_out = MessageCollector(probe, Float64MultiArray, "/sim/policy/commands", RECORDING_QOS)
    flags = MessageCollector(probe, Bool, "/sim/intervention", LATCHED_QOS)
    pause = probe.create_client(Trigger, "/sim/takeover/pause_resume")
    correction = probe.create_client(Trigger, "/sim/takeover/correction")

    def call(client) -> Trigger.Response:
        assert client.wait_for_service(timeout_sec=20)
        future = client.call_async(Trigger.Request())
        wait_until(future.done, 20, what="takeover service")
        return future.result()

    def logs() -> str:
        return "".join(p.read_text(errors="replace")[-2000:] for p in tmp_path.glob("*.log"))

    def wait(pred, timeout, what):
        try:
            wait_until(pred, timeout, what=what)
        except TimeoutError as exc:
            raise AssertionError(f"{exc}\n{logs()}") from None

    try:
        wait(lambda: len(commands.messages) > 20, 400, "the policy driving the twin")
        refused = None
        res = call(pause)
        assert res.success and res.message == "paused"
        # the stop reaches the policy node a moment after the reply: count once its last ticks are in
        n_policy = policy_out.wait_quiet(0.5, timeout=20)
        refused = call(correction)  # no teleop yet
        assert not refused.success and "no teleop target yet" in refused.message
        procs.append(
            _spawn(
                [
                    os.path.join(VENV_BIN, "teleop_node"),
                    "--ros-args",
                    "-r",
                    "__ns:=/leader",
                    "-p",
                    f"teleop.port:={vdir / 'so101_leader'}",
                    "-p",
                    f"teleop.calibration_file:={vdir / 'calibration' / 'virtual_leader.json'}",
                    "-p",
                    "commands_topic:=/sim/teleop/commands",
                ],
                ros_env,
                tmp_path / "teleop.log",
            )
        )
        teleop_in = MessageCollector(probe, Float64MultiArray, "/sim/teleop/commands", RECORDING_QOS)
        wait(lambda: len(teleop_in.messages) > 10, 240, "the emulated leader's commands")
        time.sleep(1.0)
        assert len(policy_out.messages) == n_policy  # the policy node was stopped
        start = len(commands.messages)
        res = call(correction)
        assert res.success and res.message == "correcting"
        leader = np.asarray(teleop_in.messages[-1].data)
        wait(
            lambda: np.allclose(commands.messages[-1].data, teleop_in.messages[-1].data, atol=1e-6),
            60,
            "the follower target to reach the leader's pose",
        )
        handover_in = [np.asarray(m.data) for m in commands.messages[start - 1 :]]
        assert np.max(np.abs(handover_in[0] - leader)) > 2 * max_delta  # there was a gap to close
        assert np.max(_steps(handover_in)) <= max_delta + 1e-9, np.max(_steps(handover_in))
        wait_until(lambda: flags.messages and flags.messages[-1].data, 5, what="intervention tagged")
        time.sleep(0.5)
        res = call(correction)
        assert res.success and res.message == "paused"
        res = call(pause)
        assert res.success and res.message == "autonomous"
        resume = len(commands.messages) - 1
        wait(
            lambda: len(policy_out.messages) > n_policy + 10 and len(commands.messages) > resume + 40,
            120,
            "the policy driving again",
        )
        after = [np.asarray(m.data) for m in commands.messages[resume - 1 : resume + 40]]
        policy_targets = [np.asarray(m.data) for m in policy_out.messages[n_policy:]]
        # the handover: from the held target until the output is the policy's own target (its later steps are
        # the policy's own motion, which policy_node's safety gates limit, not the takeover)
        reached = next(i for i, c in enumerate(after) if any(np.array_equal(c, t) for t in policy_targets))
        assert np.max(_steps(after[: reached + 1])) <= max_delta + 1e-9, np.max(_steps(after[: reached + 1]))
        tagged = [m.data for m in flags.messages]
        assert True in tagged and tagged[-1] is False  # a person drove in between; the policy drives now
    finally:
        takeover.destroy_node()
        bridge.close()
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, 2)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
