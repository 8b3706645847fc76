"""`lerobot-eval --env.type=ros_bridge`: LeRobot's own eval CLI through a Meta-World sim bridge on ROS topics, one
bridge process per vector-env worker, against LeRobot's own loop on LeRobot's MetaworldEnv (same task, seeds, render
settings and episode cut: `lerobot_ros.eval.reference`), episode by episode.

The policy is a small random ACT saved to disk (LeRobot loads it from `--policy.path`); the plugin is found by
LeRobot's discovery (the installed `lerobot_env_ros_bridge` distribution).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from lerobot_ros.eval.reference import run_lerobot_eval
from lerobot_ros.sim import RenderSettings
from lerobot_ros.testing.policies import metaworld_act

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
TASK, SIZE, STEPS, SEED = "push-v3", 32, 15, 1000


@pytest.fixture(scope="module")
def policy(tmp_path_factory):
    return metaworld_act(tmp_path_factory.mktemp("act") / "act", SIZE)


@pytest.fixture(scope="module")
def reference(policy):
    """LeRobot's eval_policy_all on LeRobot's MetaworldEnv, in this process."""
    info = run_lerobot_eval(TASK, 2, SEED, RenderSettings(SIZE, SIZE, shadows=False), str(policy), STEPS)
    return info["per_task"][0]["metrics"]


def _bridges() -> list[str]:
    """Command lines of this run's eval bridges still alive (none may be left behind)."""
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "sim_bridge_node" in line and "__ns:=/lerobot_eval/" in line]


def _lerobot_eval(policy: Path, out: Path, *extra: str) -> dict:
    done = subprocess.run(
        [
            str(BIN / "lerobot-eval"),
            f"--policy.path={policy}",
            "--policy.device=cpu",
            "--env.type=ros_bridge",
            f"--env.task={TASK}",
            f"--env.observation_width={SIZE}",
            f"--env.observation_height={SIZE}",
            f"--env.episode_length={STEPS}",
            "--env.shadows=false",
            "--eval.n_episodes=2",
            f"--seed={SEED}",
            f"--output_dir={out}",
            *extra,
        ],
        env=dict(os.environ, MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"), HF_HUB_OFFLINE="1"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads((out / "eval_info.json").read_text())


def test_lerobot_eval_with_its_defaults_matches_lerobots_loop(policy, reference, tmp_path):
    """lerobot-eval's own batch size (auto) and async flag (default on): one worker on this 2-core machine, so
    episode by episode bit for bit."""
    from lerobot.configs.default import EvalConfig

    info = _lerobot_eval(policy, tmp_path / "eval")
    ours = info["per_task"][0]["metrics"]
    assert ours["successes"] == reference["successes"]
    if EvalConfig(n_episodes=2).batch_size == 1:
        assert ours["sum_rewards"] == reference["sum_rewards"]  # bit for bit
        assert ours["max_rewards"] == reference["max_rewards"]
    else:  # several workers: the policy runs batched, which moves float results in their last bits
        assert np.allclose(ours["sum_rewards"], reference["sum_rewards"], rtol=1e-5)
    assert len(set(ours["sum_rewards"])) == 2  # the two seeds gave two episodes
    assert len(info["overall"]["video_paths"]) == 2  # render() fed lerobot-eval's videos
    assert _bridges() == []


def test_async_vector_env_runs_one_bridge_per_worker(policy, reference, tmp_path):
    """Two async workers (forkserver): each starts its own bridge on its first reset, none in the parent."""
    info = _lerobot_eval(policy, tmp_path / "eval", "--eval.batch_size=2", "--eval.use_async_envs=true")
    ours = info["per_task"][0]["metrics"]
    assert ours["successes"] == reference["successes"]
    # the two episodes ran in one batch: the policy saw both observations at once (float results move in their
    # last bits); the simulators behind the two bridges are the same as LeRobot's
    assert np.allclose(ours["sum_rewards"], reference["sum_rewards"], rtol=1e-5)
    assert np.allclose(ours["max_rewards"], reference["max_rewards"], rtol=1e-5)
    assert _bridges() == []


def test_a_dead_bridge_and_a_nan_action_fail_in_one_line(tmp_path):
    """In this process: the env's NaN action is refused before anything is sent; a bridge killed mid-episode
    ends the next step with a one-line error naming the exit and the bridge's log."""
    from lerobot_ros.eval.bridge_session import BridgeSessionError
    from lerobot_ros.plugins.env import RosBridgeEnv

    env = RosBridgeEnv(task=TASK, observation_width=SIZE, observation_height=SIZE, episode_length=STEPS, shadows=False)
    try:
        obs, info = env.reset(seed=SEED)
        assert obs["pixels"].shape == (SIZE, SIZE, 3) and obs["pixels"].dtype == np.uint8
        assert obs["agent_pos"].shape == (4,) and info == {"is_success": False, "task": env.task_description}
        assert env.task_description and env.task_description != TASK  # the bridge's task sentence
        obs, reward, terminated, truncated, info = env.step(np.zeros(4, np.float32))
        assert np.isfinite(reward) and not terminated and not truncated and info["is_success"] is False
        with pytest.raises(BridgeSessionError, match=r"non-finite values \[nan, 0.0, 0.0, 0.0\]; nothing was sent"):
            env.step(np.array([np.nan, 0, 0, 0]))
        os.killpg(env._session.process.pid, signal.SIGKILL)
        with pytest.raises(BridgeSessionError) as caught:
            env.step(np.zeros(4, np.float32))
        message = str(caught.value)
        assert "exited with code -9" in message and "while waiting for step 2 of episode 0" in message, message
        assert "\n" not in message and "(log: " in message
    finally:
        env.close()
    assert _bridges() == []


def test_the_robot_plugin_reads_and_drives_a_realtime_meta_world_bridge(tmp_path):
    """The `ros_contract` robot on the shipped metaworld contract (moved to its own namespace): LeRobot's one
    sim camera becomes the camera `image`, the state its four floats, and actions move the hand."""
    import yaml

    from lerobot_ros.contract import load_contract
    from lerobot_ros.eval.node_process import NodeProcess, NodeSpec, namespaced_contract
    from lerobot_ros.plugins.robot import RosContractRobot, RosContractRobotConfig
    from lerobot_ros.ros.runtime import RosRuntime, call_until_answered
    from lerobot_ros_msgs.srv import ResetEpisode

    contract = tmp_path / "metaworld.yaml"
    contract.write_text(yaml.safe_dump(namespaced_contract(load_contract("metaworld").raw, "/mw", (SIZE, SIZE))))
    params = {
        "env.type": "metaworld",
        "env.task": TASK,
        "mode": "realtime",
        "env.observation_width": SIZE,
        "env.observation_height": SIZE,
        "shadows": False,
        "reset_on_start": False,
    }
    bridge = NodeProcess(NodeSpec("lerobot_ros.nodes.sim_bridge_node", "/mw", "sim_bridge", params), tmp_path / "b.log")
    os.environ["HF_LEROBOT_HOME"] = str(tmp_path / "hf")
    robot = RosContractRobot(
        RosContractRobotConfig(contract=str(contract), id="mw", check_on_create=False, connect_timeout_s=60)
    )
    try:
        with RosRuntime() as ros:
            client = ros.create_node("mw_reset").create_client(ResetEpisode, "/mw/reset_episode")
            assert client.wait_for_service(timeout_sec=240), bridge.tail()
            # a seeded reset sent again gives the same first state: safe to resend if a reply is lost
            call_until_answered(
                lambda: client.call_async(ResetEpisode.Request(seed=SEED)), 120, what="/mw/reset_episode"
            )
        robot.connect()
        names = ["hand_x", "hand_y", "hand_z", "gripper_distance"]
        assert robot.observation_features == {**dict.fromkeys(names, float), "image": (SIZE, SIZE, 3)}
        assert list(robot.cameras) == ["image"]
        start = robot.get_observation()
        assert start["image"].shape == (SIZE, SIZE, 3) and start["image"].dtype == np.uint8
        action = {"delta_x": 1.0, "delta_y": 0.0, "delta_z": 0.0, "gripper": 0.0}
        deadline = time.monotonic() + 30
        moved = 0.0
        while moved < 0.01 and time.monotonic() < deadline:  # the bridge steps at 80 Hz with the newest action
            robot.send_action(action)
            time.sleep(1 / 80)
            moved = robot.get_observation()["hand_x"] - start["hand_x"]
        assert moved >= 0.01, moved
    finally:
        robot.disconnect()
        bridge.stop()
