"""`lerobot-ros eval --policy.path` with the tiny SmolVLA (lerobot_ros.testing.vla): the same seeds through LeRobot's own
rollout (`lerobot.scripts.lerobot_eval.rollout`, task from `env.call("task_description")`) and through ROS (sim bridge
in lockstep + policy_node, the task on the bridge's latched `task` topic), per-step actions and the prompts that reached
the policy's tokenizer compared; and LIBERO, where each task's instruction is what the policy reads.

Tolerance: the per-step actions agree to 1e-5 absolute (both sides run the same float32 CPU kernels on the same
uint8 images and float32 states; measured differences are 0 or a few ulp). lerobot-eval seeds torch once per run,
policy_node re-seeds at every `~/reset` (once per episode): the reference re-seeds before each rollout likewise,
which is the only deviation from lerobot-eval's `eval_policy` loop here.
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
from std_msgs.msg import Float64MultiArray, String

from lerobot_ros.eval.evaluation import EvalConfig, Evaluation
from lerobot_ros.ros.qos import RECORDING_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until
from lerobot_ros.sim import RenderSettings
from lerobot_ros.testing.policies import make_policy_folder

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800), pytest.mark.filterwarnings("ignore::UserWarning")]
pytest.importorskip("transformers")

TASKS = ("push-v3",)  # a task per process start-up: one keeps the test within minutes on a loaded 2-core machine
STEPS, EPISODES, CHUNK, SEED = 15, 2, 10, 1000


def smolvla_for(out, state_dim: int, action_dim: int, cameras: dict):
    return make_policy_folder(
        out,
        kind="smolvla",
        state_dim=state_dim,
        action_dim=action_dim,
        cameras=cameras,
        chunk_size=CHUNK,
        n_action_steps=CHUNK,
    )


class PolicyTap:
    """Everything the policy nodes in /sim_0, /sim_1 publish: actions and tick_info, in order, per namespace."""

    def __init__(self, ros, namespaces=("/sim_0", "/sim_1")):
        node = ros.create_node("vla_eval_tap")
        self.actions = {
            ns: MessageCollector(node, Float64MultiArray, f"{ns}/commands", RECORDING_QOS) for ns in namespaces
        }
        self.ticks = {
            ns: MessageCollector(node, String, f"{ns}/policy_node/tick_info", RECORDING_QOS) for ns in namespaces
        }

    def episodes(self, ns: str, per_episode: int):
        """[(actions (n, D), {tick in episode: prompt of the chunk predicted there})] cut every `per_episode` ticks."""
        actions = np.stack([np.asarray(m.data) for m in self.actions[ns].messages])

        def lockstep_ticks():
            # an observation that came before the bridge's latched task is not acted on (the evaluator then resets
            # the episode again, same seed): drop those ticks; every other lockstep tick acts once
            ticks = [json.loads(m.data) for m in self.ticks[ns].messages]
            return [t for t in ticks if t["published"] or "waiting for a task" not in (t["reason"] or "")]

        try:  # a tick's report is published after its action: let the last one arrive
            wait_until(lambda: len(lockstep_ticks()) >= len(actions), 5.0, what="the last tick reports")
        except TimeoutError:
            pass  # the assertion below says what is missing
        ticks = lockstep_ticks()
        assert all(t["published"] for t in ticks) and len(ticks) == len(actions), "every lockstep tick acts once"
        out = []
        for start in range(0, len(ticks), per_episode):
            part = ticks[start : start + per_episode]
            prompts = {i: t["chunk_task"] for i, t in enumerate(part) if t["chunk_task"] is not None}
            out.append((actions[start : start + per_episode], prompts))
        return out


def lerobot_rollouts(task: str, policy_path, seeds, render: RenderSettings):
    """LeRobot's rollout on its MetaworldEnv (rendered as the bridge renders), one episode per seed, torch re-seeded
    before each; returns [(actions (T, D), {step: prompt the tokenizer got when a chunk was predicted})]."""
    import torch
    from lerobot.envs.configs import MetaworldEnv as MetaworldEnvConfig
    from lerobot.scripts.lerobot_eval import rollout
    from lerobot.utils.random_utils import set_seed

    from lerobot_ros.eval.reference import load_reference_policy, make_reference_env
    from lerobot_ros.policy.language import tokenizer_step

    policy, pre, post = load_reference_policy(str(policy_path))
    envs, _ = make_reference_env(task, render, STEPS)
    vec = envs[task][0]
    env_pre, env_post = MetaworldEnvConfig(task=task).get_env_processors()
    step = tokenizer_step(pre)
    tokenize, seen = step._tokenize_text, []
    step._tokenize_text = lambda text: (seen.append(list(text)), tokenize(text))[1]
    chunk_fn, chunk_at = policy._get_action_chunk, []
    policy._get_action_chunk = lambda *a, **k: (chunk_at.append(len(seen) - 1), chunk_fn(*a, **k))[1]
    out = []
    for seed in seeds:
        set_seed(SEED)  # policy_node's seed (lerobot-eval's start seed), re-applied at each ~/reset
        seen.clear(), chunk_at.clear()
        with torch.no_grad():
            data = rollout(vec, policy, env_pre, env_post, pre, post, seeds=[seed])
        actions = data["action"][0].numpy()
        out.append((actions, {i: seen[i][0] for i in chunk_at}))
    vec.close()
    return out


def test_smolvla_parity_with_lerobot_rollout_on_metaworld(ros, tmp_path):
    policy = smolvla_for(tmp_path / "smolvla", 4, 4, {"observation.image": (64, 64)})
    tap = PolicyTap(ros)
    cfg = EvalConfig(
        task=",".join(TASKS),
        policy_path=str(policy),
        n_episodes=EPISODES,
        start_seed=SEED,
        workers=1,
        max_episode_steps=STEPS,
        videos=0,
        output_dir=tmp_path / "ros",
        quiet=True,
        startup_timeout_s=900,
    )
    info = Evaluation(cfg).run()
    assert info["lerobot_ros"]["render"] == [64, 64]
    descriptions = info["lerobot_ros"]["task_description"]
    descriptions = [descriptions] if isinstance(descriptions, str) else descriptions  # one task: a string
    assert descriptions == ["Push the puck to a goal"]

    # the taps saw each task's policy node in turn: /sim_0 for both tasks unless the second took a fresh namespace
    episodes = []
    for ns in tap.ticks:
        if tap.ticks[ns].messages:
            episodes += tap.episodes(ns, STEPS + 1)  # each episode's final observation is answered too (rejected)
    assert len(episodes) == len(TASKS) * EPISODES
    for k, task in enumerate(TASKS):
        ref = lerobot_rollouts(task, policy, [SEED + i for i in range(EPISODES)], RenderSettings(64, 64, shadows=False))
        for e, ((ros_actions, ros_prompts), (ref_actions, ref_prompts)) in enumerate(
            zip(episodes[k * EPISODES :], ref)
        ):
            assert ref_actions.shape == (STEPS, 4)
            np.testing.assert_allclose(
                ros_actions[:STEPS], ref_actions, rtol=0, atol=1e-5, err_msg=f"{task} episode {e}"
            )
            # lerobot-eval's task string (env.call("task_description")) after SmolVLA's newline step, at the same steps
            assert ref_prompts == {0: descriptions[k] + "\n", CHUNK: descriptions[k] + "\n"}
            assert ros_prompts == ref_prompts
    assert [e["seed"] for e in info["per_episode"]] == [SEED + i for _ in TASKS for i in range(EPISODES)]


@pytest.mark.skipif(
    importlib.util.find_spec("libero") is None, reason="LIBERO extra not installed (make test installs it)"
)
def test_eval_smolvla_on_libero_reads_each_tasks_instruction(ros, tmp_path):
    """`lerobot-ros eval --env libero --task libero_spatial --task-id 0,1 --policy.path SMOLVLA`: each task's episodes
    are conditioned on its LIBERO instruction, as lerobot-eval's LiberoEnv.task_description gives it."""
    from lerobot_ros.sim.libero_env import wire_libero

    wire_libero()
    from libero.libero import benchmark

    suite = benchmark.get_benchmark_dict()["libero_spatial"]()
    instructions = [suite.get_task(i).language for i in (0, 1)]
    policy = smolvla_for(tmp_path / "smolvla", 8, 7, {"image": (64, 64), "image2": (64, 64)})
    tap = PolicyTap(ros)
    cfg = EvalConfig(
        env="libero",
        task="libero_spatial",
        task_ids=(0, 1),
        policy_path=str(policy),
        n_episodes=1,
        start_seed=SEED,
        workers=1,
        max_episode_steps=3,
        videos=0,
        output_dir=tmp_path / "ros",
        quiet=True,
        startup_timeout_s=900,
    )
    info = Evaluation(cfg).run()
    assert list(info["lerobot_ros"]["task_description"]) == instructions
    assert [(t["task_group"], t["task_id"]) for t in info["per_task"]] == [("libero_spatial", 0), ("libero_spatial", 1)]
    prompts = []
    for ns in tap.ticks:
        for episode_actions, episode_prompts in tap.episodes(ns, 3 + 1) if tap.ticks[ns].messages else []:
            assert np.isfinite(episode_actions).all()
            prompts.append(episode_prompts)
    assert prompts == [{0: text + "\n"} for text in instructions]
