"""LeRobot's own evaluation loop on the same env, task, seeds and render settings as a ROS evaluation.

Used by the parity test and the benchmark: it calls `lerobot.scripts.lerobot_eval.eval_policy_all`
(rollout, masking, reductions) on a `MetaworldEnv` built the way `create_metaworld_envs` builds it,
with the bridge's render size/shadows and episode cut applied, so both sides step the same simulator
with the same observations. The Meta-World scripted expert enters LeRobot's loop as a
`PreTrainedPolicy` that reads the env's 39-D state, exactly what the expert node receives on ROS.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from lerobot_ros.sim import RenderSettings


def make_reference_env(task: str, render: RenderSettings, max_episode_steps: int = 0, current: dict | None = None):
    """{task: {0: SyncVectorEnv([MetaworldEnv])}} rendering like a bridge with `render`; also the env.

    `current["env"]` is set to the env on each of its inner steps and resets (which env a shared expert
    policy is acting for, in a multi-task run)."""
    import gymnasium as gym
    from lerobot.envs.metaworld import MetaworldEnv

    from lerobot_ros.sim.metaworld_env import check_metaworld_task, configure_metaworld_render

    name = check_metaworld_task(task)
    env = MetaworldEnv(
        task=name, obs_type="pixels_agent_pos", observation_width=render.width, observation_height=render.height
    )
    viewer = configure_metaworld_render(env, render)
    outer_step, outer_reset = env.step, env.reset

    def current_step(*args, **kwargs):  # several envs: gymnasium renders into whatever context is current
        viewer.make_context_current()
        return outer_step(*args, **kwargs)

    def current_reset(*args, **kwargs):
        viewer.make_context_current()
        return outer_reset(*args, **kwargs)

    env.step, env.reset = current_step, current_reset
    if max_episode_steps:
        env._max_episode_steps = int(max_episode_steps)
    raw = {"obs": None}
    current = {} if current is None else current
    inner = env._env
    step, reset = inner.step, inner.reset

    def capture_step(action):
        out = step(action)
        raw["obs"] = np.array(out[0], dtype=np.float64)
        current["env"] = env
        return out

    def capture_reset(*args, **kwargs):
        out = reset(*args, **kwargs)
        raw["obs"] = np.array(out[0], dtype=np.float64)
        current["env"] = env
        return out

    inner.step, inner.reset = capture_step, capture_reset
    env.lerobot_ros_raw = raw  # the 39-D state of the last inner step/reset (for the expert)
    env.lerobot_ros_task = name
    return {task: {0: gym.vector.SyncVectorEnv([lambda: env])}}, env


def make_reference_envs(task: str, render: RenderSettings, max_episode_steps: int = 0):
    """lerobot-eval's {task_group: {task_id: vec_env}} for a Meta-World `--env.task` (tasks and difficulty
    groups, comma-separated; expanded by the registry as create_metaworld_envs expands them), and the
    dict naming the env being stepped."""
    from lerobot_ros.sim.registry import expand_tasks

    current: dict = {}
    envs: dict = {}
    for ref in expand_tasks("metaworld", task):
        vec, env = make_reference_env(ref.task, render, max_episode_steps, current)
        envs.setdefault(ref.group, {})[ref.task_id] = vec[ref.task][0]
        current.setdefault("env", env)
    return envs, current


def expert_policy(env, task: str | None = None):
    """Meta-World's scripted expert as a LeRobot PreTrainedPolicy (reads the env's 39-D state).

    `env` is one reference env, or the `current` dict of `make_reference_envs` (the expert then acts
    for whichever env was stepped last, with that env's task's expert)."""
    import torch
    from lerobot.configs.policies import PreTrainedConfig
    from lerobot.policies.act.configuration_act import ACTConfig
    from lerobot.policies.pretrained import PreTrainedPolicy

    from lerobot_ros.sim.experts import MetaWorldExpert

    current = env if isinstance(env, dict) else {"env": env}

    class MetaWorldExpertPolicy(PreTrainedPolicy):
        config_class = PreTrainedConfig
        name = "metaworld_expert"

        def __init__(self):
            super().__init__(ACTConfig(pretrained_backbone_weights=None, device="cpu"))
            self.experts: dict[str, MetaWorldExpert] = {}

        def get_optim_params(self):
            return {}

        def reset(self):
            """The Meta-World experts are stateless."""

        def forward(self, batch):
            raise NotImplementedError

        def predict_action_chunk(self, batch, **kwargs):
            return self.select_action(batch)[:, None]

        def select_action(self, batch, **kwargs):
            e = current["env"]
            name = task if task and not isinstance(env, dict) else e.lerobot_ros_task
            expert = self.experts.get(name) or self.experts.setdefault(name, MetaWorldExpert(name))
            # float32, as the bridge steps it (the expert node's float64 command is cast there too)
            action = expert.act(e.lerobot_ros_raw["obs"]).astype(np.float32)
            return torch.from_numpy(action).reshape(1, -1)

    return MetaWorldExpertPolicy()


def load_reference_policy(path: str, device: str = "cpu"):
    """Policy and processors the way lerobot-eval's eval_main loads them from a pretrained folder."""
    from lerobot.configs.policies import PreTrainedConfig
    from lerobot.policies.factory import get_policy_class, make_pre_post_processors

    cfg = PreTrainedConfig.from_pretrained(path)
    cfg.device = device
    policy = get_policy_class(cfg.type).from_pretrained(path, config=cfg)
    policy.eval()
    pre, post = make_pre_post_processors(
        policy_cfg=cfg,
        pretrained_path=path,
        preprocessor_overrides={
            "device_processor": {"device": device},
            "rename_observations_processor": {"rename_map": {}},
        },
    )
    return policy, pre, post


def run_lerobot_eval(
    task: str,
    n_episodes: int,
    start_seed: int,
    render: RenderSettings,
    policy_path: str | None = None,
    max_episode_steps: int = 0,
    videos_dir: Path | None = None,
    max_episodes_rendered: int = 0,
    device: str = "cpu",
) -> dict:
    """eval_policy_all's info dict for `policy_path` (or the scripted expert when None) over `task` (one
    Meta-World task, or several / difficulty groups comma-separated, as lerobot-eval's --env.task), plus `wall_s`
    (env construction + all episodes, the policy's loading excluded) and `episode_wall_s` per episode."""
    import torch
    from lerobot.envs.configs import MetaworldEnv as MetaworldEnvConfig
    from lerobot.scripts.lerobot_eval import eval_policy_all
    from lerobot.utils.random_utils import set_seed

    set_seed(start_seed)
    if policy_path:
        policy, pre, post = load_reference_policy(policy_path, device)
    # the simulator is built inside the timed part, as lerobot-eval builds it lazily on the first reset
    # (and as the bridge does): `wall_s` compares with a ROS evaluation's eval_s
    t0 = time.monotonic()
    envs, current = make_reference_envs(task, render, max_episode_steps)
    env_pre, env_post = MetaworldEnvConfig(task=task).get_env_processors()
    if not policy_path:
        policy, pre, post = expert_policy(current), (lambda x: x), (lambda x: x)
    starts: list[float] = []  # rollout() calls policy.reset() once at the start of each episode
    reset = policy.reset

    def timed_reset():
        starts.append(time.monotonic())
        reset()

    policy.reset = timed_reset
    with torch.no_grad():
        info = eval_policy_all(
            envs=envs,
            policy=policy,
            env_preprocessor=env_pre,
            env_postprocessor=env_post,
            preprocessor=pre,
            postprocessor=post,
            n_episodes=n_episodes,
            max_episodes_rendered=max_episodes_rendered,
            videos_dir=videos_dir,
            start_seed=start_seed,
        )
    end = time.monotonic()
    info["wall_s"] = end - t0
    info["episode_wall_s"] = [b - a for a, b in zip(starts, starts[1:] + [end])]
    return info
