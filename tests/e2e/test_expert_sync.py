"""ExpertSync without ROS: one action per step whatever order the step's inputs arrive in, a reset on each
new episode, nothing while done; and the real experts behind make_expert_sync."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lerobot_ros.sim import SimStartupError
from lerobot_ros.sim.expert_sync import ENV_STATE, JOINTS, STATUS, ExpertSync, StepStatus
from lerobot_ros.sim.registry import make_expert_sync


class CountingExpert:
    """Records resets; its action is built from the step's inputs so a test sees which ones it got."""

    def __init__(self):
        self.resets = 0

    def reset(self):
        self.resets += 1


def sync3():
    expert = CountingExpert()
    return ExpertSync(expert, (STATUS, ENV_STATE, JOINTS), lambda i: np.concatenate([i[JOINTS], i[ENV_STATE]])), expert


@pytest.mark.parametrize("order", list(itertools.permutations([STATUS, ENV_STATE, JOINTS])))
def test_one_action_per_step_in_any_arrival_order(order):
    sync, expert = sync3()
    inputs = {STATUS: StepStatus(0, False), ENV_STATE: np.array([7.0]), JOINTS: np.array([1.0, 2.0])}
    results = [sync.offer(key, inputs[key]) for key in order]
    assert all(r is None for r in results[:-1])
    np.testing.assert_array_equal(results[-1], [1.0, 2.0, 7.0])
    assert expert.resets == 1 and sync.episode_index == 0


def test_never_mixes_steps():
    sync, _ = sync3()
    sync.offer(ENV_STATE, np.array([1.0]))  # step 1's cube ...
    sync.offer(STATUS, StepStatus(0, False))
    action = sync.offer(JOINTS, np.array([0.0, 0.0]))
    np.testing.assert_array_equal(action, [0.0, 0.0, 1.0])
    # step 2: the joints come first; the cube of step 1 is not reused
    assert sync.offer(JOINTS, np.array([5.0, 5.0])) is None
    assert sync.offer(STATUS, StepStatus(0, False)) is None
    np.testing.assert_array_equal(sync.offer(ENV_STATE, np.array([2.0])), [5.0, 5.0, 2.0])


def test_done_pauses_and_a_new_episode_resets_the_expert():
    sync, expert = sync3()

    def step(status):
        return [
            sync.offer(STATUS, status),
            sync.offer(ENV_STATE, np.zeros(1)),  # noqa: E731
            sync.offer(JOINTS, np.zeros(2)),
        ][-1]

    assert step(StepStatus(0, False)) is not None
    assert step(StepStatus(0, True)) is None and sync.done  # the final observation is not answered
    assert expert.resets == 1
    assert step(StepStatus(1, False)) is not None and not sync.done
    assert expert.resets == 2 and sync.episode_index == 1


def test_an_expert_error_consumes_the_step():
    def act(_):
        raise ValueError("cube out of reach")

    sync = ExpertSync(CountingExpert(), (STATUS, ENV_STATE), act)
    sync.offer(STATUS, StepStatus(0, False))
    with pytest.raises(ValueError, match="cube out of reach"):
        sync.offer(ENV_STATE, np.zeros(3))
    assert sync.offer(ENV_STATE, np.zeros(3)) is None  # waits for the next step's status


def test_the_real_so101_pick_and_an_unknown_kind():
    from lerobot_ros.sim.so101_twin import SO101Twin

    pick = make_expert_sync("so101_pick", scene="pick")
    assert pick.needs == (STATUS, ENV_STATE, JOINTS)
    twin = SO101Twin(cameras=())
    try:
        obs = twin.reset(seed=3)
        pick.offer(STATUS, StepStatus(0, False))
        pick.offer(JOINTS, obs.state)
        action = pick.offer(ENV_STATE, obs.env_state)
    finally:
        twin.close()
    assert action.shape == (6,) and np.all(np.isfinite(action))
    with pytest.raises(SimStartupError, match="unknown expert 'ur5'; use one of metaworld, so101_pick"):
        make_expert_sync("ur5")


@pytest.mark.slow  # building Meta-World's env for its expert takes a minute on a loaded 2-core machine
def test_the_real_metaworld_expert():
    from lerobot_ros.sim.metaworld_env import MetaWorldSim

    sync = make_expert_sync("metaworld", task="push-v3")
    assert sync.needs == (STATUS, ENV_STATE)
    sim = MetaWorldSim("push-v3", None)
    try:
        obs = sim.reset(seed=0)
    finally:
        sim.close()
    sync.offer(STATUS, StepStatus(0, False))
    action = sync.offer(ENV_STATE, obs.env_state)
    assert action.shape == (4,) and np.all(np.isfinite(action))
