"""policy_node over real DDS with small random LeRobot policies, driven in lockstep on simulated time.

The parity test feeds one observation sequence to the node (through topics, on /clock) and to a direct
loop (the converter's path: contract decode + batch resampler, then lerobot-record's predict_action on
the same policy and processors): the actions must agree to 1e-6.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.parameter import Parameter
from rclpy.serialization import serialize_message
from rosgraph_msgs.msg import Clock

from lerobot_ros.codecs import (
    float64_multi_array_to_numpy,
    joint_trajectory_to_chunk,
    ns_to_time,
    numpy_to_image,
    numpy_to_joint_state,
    time_to_ns,
)
from lerobot_ros.configs import names
from lerobot_ros.contract import load_contract
from lerobot_ros.ros.entry import NodeStartupError
from lerobot_ros.ros.qos import RELIABLE_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until
from lerobot_ros.testing.param_probe import ParamProbe, assert_all_described
from lerobot_ros.testing.policies import SO101_JOINTS, cached_policy_folder
from lerobot_ros.testing.policy_harness import PERIOD, T0, Harness, observations, write_contract


@pytest.fixture(scope="module")
def policies(tmp_path_factory):
    base = tmp_path_factory.getbasetemp() / "policies"
    return {"act": cached_policy_folder(base, "act"), "diffusion": cached_policy_folder(base, "diffusion")}


def direct_actions(contract_path, policy_dir, joints, images, seed=0):
    """The converter's path (contract decode + batch resampler) into lerobot-record's predict_action."""
    from lerobot.common.control_utils import predict_action

    from lerobot_ros.policy import load_policy
    from lerobot_ros.resample import Stream, resample

    contract = load_contract(str(contract_path))
    stamps = T0 + np.arange(len(joints), dtype=np.int64) * PERIOD
    state_f = contract.features["observation.state"]
    image_f = contract.features["observation.images.front"]
    state = np.stack(
        [
            state_f.decode(numpy_to_joint_state(SO101_JOINTS, position=j, stamp_ns=int(t)))
            for j, t in zip(joints, stamps)
        ]
    )
    pixels = [image_f.decode(numpy_to_image(im, "rgb8", int(t))) for im, t in zip(images, stamps)]
    res = resample(
        {
            "observation.state": Stream(stamps, state, True, state_f.alignment.policy, state_f.alignment.tolerance_ns),
            "observation.images.front": Stream(
                stamps, pixels, False, image_f.alignment.policy, image_f.alignment.tolerance_ns
            ),
        },
        contract.fps,
        start_ns=int(stamps[0]),
        end_ns=int(stamps[-1]),
    )
    assert res.grid.tolist() == stamps.tolist()
    lp = load_policy(str(policy_dir), "cpu")
    lp.policy.reset()
    torch.manual_seed(seed)
    out = []
    for i in range(len(stamps)):
        frame = {
            "observation.state": res.numeric("observation.state")[i],
            "observation.images.front": res.sample("observation.images.front", i),
        }
        action = predict_action(
            frame,
            lp.policy,
            torch.device("cpu"),
            lp.preprocessor,
            lp.postprocessor,
            False,
            "pick the cube",
            "so101_follower",
        )
        out.append(action.numpy().reshape(-1))
    return contract.action_feature.to_ros(np.stack(out))


# ---- start-up errors --------------------------------------------------------------------------------
def test_missing_folder_fails_at_startup(ros, tmp_path):
    from lerobot_ros.nodes.policy_node import PolicyNode

    path, _ = write_contract(tmp_path)
    params = [Parameter("policy.path", value=str(tmp_path / "missing")), Parameter("contract", value=str(path))]
    with pytest.raises(NodeStartupError, match="does not exist"):
        PolicyNode(context=ros.context, parameter_overrides=params)


@pytest.mark.slow
def test_mismatched_features_listed_at_startup(ros, tmp_path, policies):
    from lerobot_ros.nodes.policy_node import PolicyNode

    path, _ = write_contract(tmp_path, h=96, w=128)
    params = [
        Parameter("policy.path", value=str(policies["act"])),
        Parameter("contract", value=str(path)),
        Parameter("policy.device", value="cpu"),
    ]
    with pytest.raises(NodeStartupError) as err:
        PolicyNode(context=ros.context, parameter_overrides=params)
    assert "observation.images.front: policy expects shape [3, 48, 64], the contract gives [3, 96, 128]" in str(
        err.value
    )


@pytest.mark.slow
def test_executable_prints_one_line_error(tmp_path, ros_env):
    path, _ = write_contract(tmp_path)
    proc = subprocess.run(
        [
            str(Path(sys.executable).parent / "policy_node"),
            "--ros-args",
            "-p",
            f"policy.path:={tmp_path / 'nope'}",
            "-p",
            f"contract:={path}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=ros_env,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "does not exist" in proc.stderr


# ---- parity -----------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["act", "diffusion"])
def test_parity_with_direct_loop(ros, tmp_path, policies, kind):
    path, prefix = write_contract(tmp_path)
    joints, images = observations(12, seed=7)
    expected = direct_actions(path, policies[kind], joints, images)
    h = Harness(ros, path, prefix, policies[kind])
    for k in range(len(joints)):
        t = T0 + k * PERIOD
        h.publish(t, joints[k], images[k])
        info = h.tick(t)
        assert info["status"] == "ok", info
    got = np.stack([float64_multi_array_to_numpy(m) for m in h.actions.wait_for(len(joints))])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    # the predicted chunk for rviz was published whenever the policy refilled its queue
    assert len(h.plans.wait_for(1)) >= 1


@pytest.mark.slow
def test_trajectory_mode_publishes_the_chunk(ros, tmp_path, policies):
    path, prefix = write_contract(tmp_path)
    joints, images = observations(6, seed=3)
    expected = direct_actions(path, policies["act"], joints, images)
    h = Harness(ros, path, prefix, policies["act"], output_mode="trajectory")
    assert h.node.action_topic == f"/{prefix}/follower/joint_trajectory"
    for k in range(len(joints)):
        t = T0 + k * PERIOD
        h.publish(t, joints[k], images[k])
        h.tick(t)
    trajs = h.actions.wait_for(2)  # ACT n_action_steps=5: a new chunk at ticks 0 and 5
    times, positions = joint_trajectory_to_chunk(trajs[0], list(SO101_JOINTS))
    assert positions.shape == (5, 6)
    assert times.tolist() == [i * PERIOD for i in range(5)]
    np.testing.assert_allclose(positions, expected[:5], atol=1e-6)
    np.testing.assert_allclose(joint_trajectory_to_chunk(trajs[1])[1][0], expected[5], atol=1e-6)


# ---- async ------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_async_mode_executes_chunks(ros, tmp_path, policies):
    path, prefix = write_contract(tmp_path)
    joints, images = observations(14, seed=5)
    h = Harness(ros, path, prefix, policies["act"], async_inference=True, chunk_threshold=0.5)
    statuses = []
    for k in range(len(joints)):
        t = T0 + k * PERIOD
        h.publish(t, joints[k], images[k])
        statuses.append(h.tick(t))
        h.node.controller.worker.wait_idle(30)  # lockstep: let the inference finish before the next tick
    assert statuses[0]["dry"] and statuses[0]["status"] == "dry"  # first tick: no chunk yet
    assert all(s["status"] == "ok" for s in statuses[1:]), statuses
    assert h.node.controller.worker.chunks >= 2  # re-planned when the queue fell to the threshold
    assert len(h.actions.wait_for(len(joints) - 1)) == len(joints) - 1


# ---- safety and services ----------------------------------------------------------------------------
@pytest.mark.slow
def test_warmup_staleness_stop_and_errors(ros, tmp_path, policies):
    path, prefix = write_contract(tmp_path)
    joints, images = observations(4, seed=1)
    h = Harness(
        ros,
        path,
        prefix,
        policies["act"],
        max_age_ms=150.0,
        on_stale="nothing",
        max_delta=[1.0],
        diagnostics_period_s=0.2,
    )
    # warm-up: only the joint state has arrived
    h.publish(T0, joints[0], None)
    info = h.tick(T0)
    assert info["status"] == "gated" and "observation.images.front" in info["reason"] and not info["published"]
    h.publish(T0 + PERIOD, joints[1], images[1])
    assert h.tick(T0 + PERIOD)["status"] == "ok"
    # the camera stops; joints continue: after 150 ms the image is stale and nothing is published
    for k in (2, 3):
        h.publish(T0 + k * PERIOD, joints[k], None)
    info = h.tick(T0 + 3 * PERIOD)
    assert info["status"] == "gated" and not info["published"]
    assert "nearest" in info["reason"] or "old" in info["reason"]
    assert h.node.diagnostic_values()["last_reason"] == info["reason"]
    # a wrong-size image (contract has no resize) is rejected and counted
    h.image.publish(numpy_to_image(np.zeros((10, 10, 3), np.uint8), "rgb8", T0 + 4 * PERIOD))
    wait_until(lambda: h.node.loop.rejected["observation.images.front"] == 1, 10, what="reject")
    assert "10x10" in h.node.loop.last_reject
    # a joint state cut short on the wire (its CDR bytes, read without rclpy): rejected with what is wrong
    whole = serialize_message(numpy_to_joint_state(SO101_JOINTS, position=joints[0], stamp_ns=T0 + 4 * PERIOD))
    h.state.publish(whole[:60])
    wait_until(lambda: h.node.loop.rejected["observation.state"] == 1, 10, what="reject of a truncated joint state")
    assert "malformed JointState (60 bytes)" in h.node.loop.last_reject
    # an image cut short on the wire: camera frames are read from their CDR bytes too, so it is rejected the same way
    frame = serialize_message(numpy_to_image(images[0], "rgb8", T0 + 4 * PERIOD))
    h.image.publish(frame[:-1])
    wait_until(lambda: h.node.loop.rejected["observation.images.front"] == 2, 10, what="reject of a truncated image")
    assert f"malformed Image ({len(frame) - 1} bytes)" in h.node.loop.last_reject
    # ~/stop: ticks publish nothing; ~/start resumes
    assert h.call("stop").success
    h.publish(T0 + 5 * PERIOD, joints[0], images[0])
    assert h.tick(T0 + 5 * PERIOD)["status"] == "stopped"
    assert h.call("start").success
    # the stale camera discarded the policy's queue, so this tick predicts a new chunk: from another frame than
    # the last published action's (the same frame would give the same action, nothing for max_delta to limit)
    h.publish(T0 + 6 * PERIOD, joints[3], images[3])
    info = h.tick(T0 + 6 * PERIOD)
    assert info["status"] == "ok" and "limited change" in (info["reason"] or "")  # max_delta 1 deg per tick
    # a policy that raises: the tick is skipped, the node lives on
    runner = h.node.controller.runner

    def boom(*a, **k):
        raise RuntimeError("injected failure")

    original = runner.select_action
    runner.select_action = boom
    h.publish(T0 + 7 * PERIOD, joints[2], images[2])
    info = h.tick(T0 + 7 * PERIOD)
    assert info["status"] == "error" and "injected failure" in info["reason"]
    diag = h.node.diagnostic_values()
    assert diag["policy_errors"] == "1" and "injected failure" in diag["last_error"]
    for key in (
        "rate_hz",
        "inference_ms_p50",
        "inference_ms_p99",
        "latency_ms_p50",
        "queue_depth",
        "dropped_ticks",
        "staleness_ms.observation.state",
        "staleness_ms.observation.images.front",
    ):
        assert key in diag
    assert int(diag["dropped_ticks"]) == 3  # warm-up, stale, error
    assert float(diag["inference_ms_p50"]) > 0
    runner.select_action = original
    h.publish(T0 + 8 * PERIOD, joints[3], images[3])
    assert h.tick(T0 + 8 * PERIOD)["status"] == "ok"
    assert h.call("reset").success
    # a new episode may restart simulated time: the timer follows the clock back (first tick one period later)
    h.clock.publish(Clock(clock=ns_to_time(T0)))
    h.publish(T0 + PERIOD, joints[0], images[0])
    assert h.tick(T0 + PERIOD)["status"] == "ok"
    # /diagnostics is published on the steady clock, even while simulated time stands still
    diags = MessageCollector(h.probe, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
    mine = lambda: [s for m in diags.messages for s in m.status if s.hardware_id == h.node.get_fully_qualified_name()]  # noqa: E731
    wait_until(lambda: mine(), 10, what="/diagnostics from policy_node")
    keys = {kv.key for kv in mine()[-1].values}
    assert {"rate_hz", "queue_dry_ticks", "staleness_ms.observation.images.front"} <= keys


@pytest.mark.slow
def test_tick_on_observation_joint_state_output(ros, tmp_path, policies):
    """Event-driven ticks (lockstep simulators): one tick per joint state, action as a JointState."""
    path, prefix = write_contract(tmp_path)
    joints, images = observations(3, seed=9)
    expected = direct_actions(path, policies["act"], joints, images)
    h = Harness(ros, path, prefix, policies["act"], tick_on="observation.state", output_mode="joint_state")
    assert h.node.action_topic == f"/{prefix}/follower/joint_command"
    got = h.actions
    for k in range(len(joints)):
        t = T0 + k * PERIOD
        h.publish(t, None, images[k])
        h.publish(t, joints[k], None)  # the joint state triggers the tick at its stamp
        h.info.wait_for(k + 1)
    msgs = got.wait_for(len(joints))
    assert list(msgs[0].name) == list(SO101_JOINTS)
    np.testing.assert_allclose(np.stack([m.position for m in msgs]), expected, atol=1e-6)
    # one message is reused per tick: each one still carries its own tick's stamp
    assert [time_to_ns(m.header.stamp) for m in msgs] == [int(T0 + k * PERIOD) for k in range(len(joints))]
    # tick_info splits the latency: when the triggering joint state arrived, when the action went out
    infos = [json.loads(m.data) for m in h.info.wait_for(len(joints))]
    for info in infos:
        assert info["published"] and 0 < info["received_wall_ns"] <= info["published_wall_ns"]


@pytest.mark.slow
def test_parameters_described_refused_and_max_delta_applied(ros, probe_runtime, tmp_path, policies):
    """From another context: a description for every parameter; a read-only one refused with the reason; a
    new max_delta clips the very next action; an integer is taken for a double (start-up and run time)."""
    from lerobot_ros.policy.config import PolicyNodeConfig as PolicyParams

    path, prefix = write_contract(tmp_path)
    joints, images = observations(3, seed=4)
    h = Harness(ros, path, prefix, policies["act"], max_age_ms=400)  # an integer where a double is declared
    probe = ParamProbe(probe_runtime, f"/{h.node.get_name()}")
    described = assert_all_described(probe)
    assert set(names(PolicyParams)) <= set(described)
    assert described["policy.device"].read_only and not described["max_delta"].read_only
    assert "unit: ms" in described["max_age_ms"].additional_constraints
    refused = probe.set("policy.device", "cuda")
    assert not refused.successful and "read-only" in refused.reason and h.node.params.values.policy_device == "cpu"
    h.publish(T0, joints[0], images[0])
    assert h.tick(T0)["status"] == "ok"
    applied = probe.set("max_delta", [0.01])  # degrees (the action's LeRobot units) per tick
    assert applied.successful, applied.reason
    h.publish(T0 + PERIOD, joints[1], images[1])
    info = h.tick(T0 + PERIOD)
    assert info["status"] == "ok" and "limited change per tick" in info["reason"]
    first, second = (float64_multi_array_to_numpy(m) for m in h.actions.wait_for(2)[:2])
    assert np.max(np.abs(np.rad2deg(second - first))) <= 0.01 + 1e-9  # the topic carries radians
    bad = probe.set("max_delta", [1.0, 2.0])
    assert not bad.successful and "max_delta has 2 values for an action of 6" in bad.reason
    assert probe.set("max_age_ms", 200).successful
    assert set(h.node.controller.max_age_ns.values()) == {200_000_000}
