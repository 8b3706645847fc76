"""sim_bridge_node and scripted_expert_node over real DDS: topics, lockstep stepping, resets, bad actions,
realtime mode, several bridges in namespaces, start-up errors, and the Meta-World expert succeeding."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import String

from lerobot_ros.codecs import (
    chunk_to_joint_trajectory,
    image_to_numpy,
    numpy_to_float64_multi_array,
    time_to_ns,
)
from lerobot_ros.nodes.scripted_expert_node import ScriptedExpertNode
from lerobot_ros.nodes.sim_bridge_node import SimBridgeNode
from lerobot_ros.ros.qos import LATCHED_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until
from lerobot_ros.sim.so101_twin import JOINT_NAMES
from lerobot_ros.testing.sim_client import Client

VENV_BIN = os.path.dirname(sys.executable)


def params(**values) -> list[Parameter]:
    out = []
    for name, value in values.items():
        if isinstance(value, list):
            out.append(Parameter(name, Parameter.Type.STRING_ARRAY, value))
        else:
            out.append(Parameter(name, value=value))
    return out


def twin_params(**extra):
    base = {
        "env.type": "so101",
        "env.observation_width": 32,
        "env.observation_height": 24,
        "antialias": False,
        "cameras": [],
        "publish_clock": False,
    }
    base.update(extra)
    return params(**base)


@pytest.fixture
def bridges():
    made = []
    yield made
    for node in made:
        node.close()


def start_bridge(ros, bridges, namespace, overrides) -> SimBridgeNode:
    node = SimBridgeNode(context=ros.context, namespace=namespace, parameter_overrides=overrides)
    bridges.append(node)
    ros.add_node(node)
    return node


@pytest.mark.slow
def test_twin_bridge_publishes_the_real_arm_topics_and_follows_commands(ros, bridges):
    node = start_bridge(ros, bridges, "/twin", twin_params(cameras=["front"], publish_clock=True))
    probe = ros.create_node("probe")
    images = MessageCollector(probe, Image, "/twin/front/image_raw", 10)
    infos = MessageCollector(probe, CameraInfo, "/twin/front/camera_info", 10)
    tasks = MessageCollector(probe, String, "/twin/task", LATCHED_QOS)
    clocks = MessageCollector(probe, Clock, "/clock", 10)
    client = Client(ros, "/twin")
    client.wait_status(lambda m: m.episode_index == 0)
    client.wait_subscribed()
    target = np.array([0.3, -0.2, 0.4, 0.1, -0.5, 0.6])
    for _ in range(30):
        status = client.step(target)
    assert status.step == 30 and not status.done and status.task == "Pick up the cube"
    wait_until(lambda: len(client.joints.messages) >= 31, 10, what="joint states")
    js = client.joints.messages[-1]
    assert list(js.name) == list(JOINT_NAMES)
    np.testing.assert_allclose(js.position, target, atol=0.08)  # radians, position-controlled joints
    assert time_to_ns(js.header.stamp) == time_to_ns(status.header.stamp) == node.bridge.runner.sim_time_ns
    wait_until(lambda: len(images.messages) >= 31 and len(infos.messages) >= 31, 10, what="camera frames")
    img = images.messages[-1]
    assert (img.height, img.width, img.encoding, img.header.frame_id) == (24, 32, "rgb8", "front_optical_frame")
    assert image_to_numpy(img).shape == (24, 32, 3)
    assert (infos.messages[-1].width, infos.messages[-1].height) == (32, 24)
    assert tasks.wait_for(1)[0].data == "Pick up the cube"
    wait_until(
        lambda: clocks.messages and time_to_ns(clocks.messages[-1].clock) == node.bridge.runner.sim_time_ns,
        10,
        what="/clock",
    )
    env_state = client.env_state.messages[-1]
    assert np.asarray(env_state.data).shape == (3,)  # cube position


def test_bad_actions_are_rejected_counted_and_never_stepped(ros, bridges):
    node = start_bridge(ros, bridges, "/bad", twin_params())
    client = Client(ros, "/bad")
    client.wait_status(lambda m: m.episode_index == 0)
    client.wait_subscribed()
    client.commands.publish(numpy_to_float64_multi_array(np.zeros(5)))
    client.commands.publish(numpy_to_float64_multi_array([0, 0, float("nan"), 0, 0, 0]))
    client.commands.publish(numpy_to_float64_multi_array([0, 0, 0, 0, 0, float("inf")]))
    bad_traj = chunk_to_joint_trajectory(["a", "b"], np.zeros((2, 2)), fps=30)
    client.trajectory.publish(bad_traj)
    wait_until(lambda: node.bridge.runner.validator.total_rejected == 4, 20, what="4 rejections")
    assert dict(node.bridge.runner.validator.rejected) == {"wrong_length": 1, "non_finite": 2, "unknown_joints": 1}
    assert node.bridge.runner.total_steps == 0 and client.last_status().step == 0
    # a good chunk on joint_trajectory: one lockstep step per point, joints reordered by name
    chunk = np.tile(np.array([0.1, 0.0, 0.0, 0.0, 0.0, 0.2]), (3, 1))
    order = [5, 4, 3, 2, 1, 0]
    client.trajectory.publish(chunk_to_joint_trajectory([JOINT_NAMES[i] for i in order], chunk[:, order], fps=30))
    status = client.wait_status(lambda m: m.step == 3, what="3 steps from a trajectory")
    assert node.counters["steps"] == 3 and not status.done


def test_reset_is_seeded_and_reproducible(ros, bridges):
    start_bridge(ros, bridges, "/seeded", twin_params(reset_on_start=False))
    client = Client(ros, "/seeded")

    def cube(seed):
        client.env_state.items.clear()
        response = client.reset(seed)
        assert response.success and response.task == "Pick up the cube"
        wait_until(lambda: client.env_state.messages, 10, what="environment_state")
        return np.asarray(client.env_state.messages[-1].data), response.episode_index

    (a, ia), (b, ib), (c, _) = cube(5), cube(5), cube(6)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert (ia, ib) == (0, 1)


@pytest.mark.slow
def test_realtime_mode_holds_the_last_action_and_counts_late_ticks(ros, bridges):
    node = start_bridge(ros, bridges, "/rt", twin_params(mode="realtime"))
    client = Client(ros, "/rt")
    client.wait_status(lambda m: m.episode_index == 0)
    client.wait_subscribed()
    target = np.array([0.5, 0, 0, 0, 0, 0])
    client.commands.publish(numpy_to_float64_multi_array(target))
    status = client.wait_status(lambda m: m.step >= 40, timeout=60, what="40 realtime ticks")
    assert status.step >= 40  # the env kept stepping with one command held
    assert node.bridge.schedule.late_ticks >= 30
    assert client.joints.messages[-1].position[0] == pytest.approx(0.5, abs=0.05)


@pytest.mark.slow
def test_bridge_reports_its_real_time_factor_on_diagnostics(ros, bridges):
    from diagnostic_msgs.msg import DiagnosticArray

    from lerobot_ros.ros.sim_rate import SimRateListener

    start_bridge(ros, bridges, "/diag", twin_params(mode="realtime"))
    probe = ros.create_node("diag_probe")
    diags = MessageCollector(probe, DiagnosticArray, "/diagnostics", 10)
    rates = SimRateListener(probe)  # what demo and eval print

    def ours():
        return [s for m in diags.messages for s in m.status if s.hardware_id == "/diag/sim_bridge"]

    def rtf_reported():
        return any({kv.key: kv.value for kv in s.values}["real_time_factor"] != "nan" for s in ours())

    wait_until(rtf_reported, 60, what="a real-time factor on /diagnostics")
    status = ours()[-1]
    values = {kv.key: kv.value for kv in status.values}
    assert status.name == "sim_bridge: simulator" and values["mode"] == "realtime"
    assert 0.0 < float(values["real_time_factor"]) < 1.5  # a realtime bridge cannot run ahead of the wall clock
    assert values["target_steps_per_s"] == "30" and float(values["steps_per_s"]) > 0
    assert status.message.startswith("real-time factor ")
    wait_until(lambda: rates.summary("/diag"), 10, what="the listener's summary")
    assert rates.summary("/diag").startswith("real-time factor ") and "of 30 steps/s" in rates.summary("/diag")
    assert rates.summary("/elsewhere") == ""


@pytest.mark.slow
def test_metaworld_expert_reaches_success_through_ros_and_episodes_replay(ros, bridges):
    start_bridge(
        ros,
        bridges,
        "/mw",
        params(
            **{
                "env.type": "metaworld",
                "env.task": "push-v3",
                "env.observation_width": 64,
                "env.observation_height": 48,
            },
            antialias=False,
            reset_on_start=False,
            publish_clock=False,
        ),
    )
    expert = ScriptedExpertNode(
        context=ros.context, namespace="/mw", parameter_overrides=params(**{"env.task": "push-v3"})
    )
    ros.add_node(expert)
    client = Client(ros, "/mw")
    images = MessageCollector(client.node, Image, "/mw/corner2/image_raw", 10)

    def episode(seed):
        client.joints.items.clear()
        images.items.clear()
        response = client.reset(seed)
        final = client.wait_status(
            lambda m: m.episode_index == response.episode_index and m.done,
            timeout=240,
            what="the expert's episode to end",
        )
        wait_until(
            lambda: len(client.joints.messages) > final.step and len(images.messages) > final.step,
            20,
            what="all observations",
        )
        return (
            final,
            [np.asarray(m.position) for m in client.joints.messages],
            [image_to_numpy(m).copy() for m in images.messages],
        )

    first, joints_a, images_a = episode(3)
    assert first.success and first.step < 150 and first.sum_reward > 0
    assert first.task == "Push the puck to a goal"
    second, joints_b, images_b = episode(3)
    assert (second.step, second.sum_reward, second.success) == (first.step, first.sum_reward, True)
    assert len(joints_a) == len(joints_b) == first.step + 1
    for a, b in zip(joints_a, joints_b):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(images_a, images_b):
        np.testing.assert_array_equal(a, b)


def run_bridge(ros_env, namespace, *args):
    cmd = [os.path.join(VENV_BIN, "sim_bridge_node"), "--ros-args", "-r", f"__ns:={namespace}", *args]
    return subprocess.Popen(cmd, env=ros_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.slow
def test_several_bridges_in_their_own_processes_and_namespaces(ros, ros_env):
    common = [
        "-p",
        "env.type:=so101",
        "-p",
        "cameras:=['front']",
        "-p",
        "env.observation_width:=16",
        "-p",
        "env.observation_height:=16",
        "-p",
        "antialias:=false",
        "-p",
        "publish_clock:=false",
    ]
    clients = [Client(ros, f"/sim_{i}") for i in range(2)]  # subscribed before the bridges start
    procs = [run_bridge(ros_env, f"/sim_{i}", *common, "-p", f"seed:={i}") for i in range(2)]
    try:
        for c in clients:
            c.wait_status(lambda m: m.episode_index == 0, timeout=180)
            c.wait_subscribed()
            c.step(np.zeros(6))  # observations published after this step reach the client for sure
        cubes = [np.asarray(c.env_state.wait_for(1, timeout=20)[-1].data) for c in clients]
        assert not np.array_equal(cubes[0], cubes[1])  # seeds 0 and 1 put the cube in different places
        clients[1].step(np.full(6, 0.2))
        wait_until(lambda: clients[1].last_status().step == 2, 30, what="/sim_1 stepping")
        # the graph: each bridge takes commands from its own namespace only
        for i, c in enumerate(clients):
            subs = c.node.get_subscriptions_info_by_topic(f"/sim_{i}/commands")
            assert [s.node_namespace for s in subs] == [f"/sim_{i}"]
        # behaviour: /sim_0's next step, caused by its own action, is its second (step() waits for the step after
        # the last status: had /sim_1's action stepped /sim_0 too, this would be step 3)
        assert clients[0].step(np.zeros(6)).step == 2
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            out, _ = p.communicate(timeout=30)
            assert "Traceback" not in out, out


def test_unknown_task_fails_at_startup_with_a_hint(ros_env):
    proc = subprocess.run(
        [
            os.path.join(VENV_BIN, "sim_bridge_node"),
            "--ros-args",
            "-p",
            "env.type:=metaworld",
            "-p",
            "env.task:=push-v9",
        ],
        env=ros_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "unknown Meta-World task 'push-v9': did you mean push-v3" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_so101_scripted_pick_runs_as_a_node_on_the_twin(ros, bridges):
    start_bridge(ros, bridges, "/pick", twin_params(reset_on_start=False))
    expert = ScriptedExpertNode(context=ros.context, namespace="/pick", parameter_overrides=params(expert="so101_pick"))
    ros.add_node(expert)
    client = Client(ros, "/pick")
    response = client.reset(2)
    final = client.wait_status(
        lambda m: m.episode_index == response.episode_index and m.done, timeout=120, what="the pick to end"
    )
    assert final.success and final.step < 120
    assert expert.actions_sent >= final.step


def test_integer_fps_starts_the_bridge_and_parameters_are_described(ros, ros_env):
    """`-p fps:=30` (an integer for a double) used to end in InvalidParameterTypeException; from another
    process every parameter is described and a read-only one is refused with a reason."""
    from lerobot_ros.configs import names
    from lerobot_ros.sim.config import BridgeConfig as SimBridgeParams
    from lerobot_ros.testing.param_probe import ParamProbe, assert_all_described

    client = Client(ros, "/fps_int")
    proc = run_bridge(
        ros_env,
        "/fps_int",
        "-p",
        "env.type:=so101",
        "-p",
        "fps:=30",
        "-p",
        "cameras:=[none]",
        "-p",
        "env.observation_width:=16",
        "-p",
        "env.observation_height:=16",
        "-p",
        "publish_clock:=false",
    )
    try:
        client.wait_status(lambda m: m.episode_index == 0, timeout=120)
        probe = ParamProbe(ros, "/fps_int/sim_bridge")
        assert probe.get("fps") == 30.0
        described = assert_all_described(probe)
        assert set(names(SimBridgeParams)) <= set(described)
        assert "one of: metaworld, so101, libero" in described["env.type"].additional_constraints
        refused = probe.set("env.type", "metaworld")
        assert not refused.successful and "read-only" in refused.reason
        assert probe.get("env.type") == "so101"
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    assert "Traceback" not in out, out
