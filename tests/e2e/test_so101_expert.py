"""The SO-101 scripted pick on the MuJoCo twin (library level, no ROS, no rendering): it lifts the cube on
every seed tried, over the whole sampling area (near and far, left and right), and still holds it afterwards;
its gravity feed-forward is what lets position servos reach a commanded pose."""

from __future__ import annotations

import numpy as np
import pytest

from lerobot_ros.sim.experts import Phase, SO101PickExpert
from lerobot_ros.sim.so101_twin import BLOCK_SAMPLING_BOUNDS, SO101Twin

#: seeds whose cubes spread over the sampling area, incl. the far corners that failed before (31, 46, 72, 79)
SEEDS = [2, 3, 4, 5, 7, 10, 11, 13, 31, 46, 72, 79]
HOLD_STEPS = 20


@pytest.fixture(scope="module")
def twin():
    sim = SO101Twin(cameras=())
    yield sim
    sim.close()


@pytest.fixture(scope="module")
def expert():
    return SO101PickExpert()


def run_pick(twin, expert, seed: int, max_steps: int = 150) -> tuple[int | None, np.ndarray, list[bool]]:
    """Steps to the first success (None: never), the cube's start and the success flag over the next steps."""
    obs = twin.reset(seed)
    expert.reset()
    cube0 = obs.env_state.copy()
    first, after = None, []
    for t in range(max_steps):
        result = twin.step(expert.act(obs.state, obs.env_state))
        obs = result.observation
        if first is None and result.success:
            first = t + 1
        elif first is not None:
            after.append(result.success)
            if len(after) == HOLD_STEPS:
                break
    return first, cube0, after


@pytest.mark.slow
def test_pick_succeeds_on_seeds_across_the_sampling_area(twin, expert):
    starts, failures = [], []
    for seed in SEEDS:
        first, cube0, after = run_pick(twin, expert, seed)
        starts.append(cube0[:2])
        if first is None or not all(after):
            failures.append((seed, first, np.round(cube0, 3).tolist()))
        else:
            # the twin's own criterion: lifted by more than its margin above the start, near the gripper
            assert twin.block_position()[2] - cube0[2] > twin.lift_height
            assert expert.phase in (Phase.LIFT, Phase.DONE)
    assert not failures, f"pick failed (seed, first success step, cube start): {failures}"
    starts = np.array(starts)
    (x0, y0), (x1, y1) = BLOCK_SAMPLING_BOUNDS
    # the seeds cover the area: far and near, both sides
    assert starts[:, 0].max() > x0 + 0.8 * (x1 - x0) and starts[:, 0].min() < x0 + 0.3 * (x1 - x0)
    assert starts[:, 1].max() > 0.05 and starts[:, 1].min() < -0.05


def test_gravity_feed_forward_holds_a_commanded_pose(twin, expert):
    """Commanding pose + gravity_sag(pose) puts the servos at the pose; commanding the pose alone leaves the
    arm sagging (the reason the old expert stalled above the cube)."""
    twin.reset(0)
    mid = expert._mid
    pose = np.array([0.1, 0.5, -0.6, 1.2, 0.05, 1.0])  # the MJCF's radians, arm reaching forward
    errors = {}
    for compensate in (False, True):
        twin.reset(0)
        arm = pose[:5] + (expert.gravity_sag(pose) if compensate else 0.0)
        command = np.concatenate([arm, pose[5:]]) - mid
        for _ in range(60):
            obs = twin.step(command).observation
        errors[compensate] = np.abs(obs.state[:5] + mid[:5] - pose[:5]).max()
    assert errors[False] > 0.015  # rad: kp alone leaves a visible sag
    assert errors[True] < 0.005
