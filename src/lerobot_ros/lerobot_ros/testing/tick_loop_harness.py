"""The policy tick loop without ROS around a real small random ACT: a loop built like the node builds it, a recorder of what it would publish, observations fed to it."""

from __future__ import annotations

import pytest

from lerobot_ros.contract import load_contract
from lerobot_ros.policy import load_policy
from lerobot_ros.policy.build import build_tick_loop
from lerobot_ros.policy.config import PolicyNodeConfig as PolicyParams
from lerobot_ros.testing.policies import cached_policy_folder, random_frames
from lerobot_ros.testing.policy_harness import CONTRACT

STATE, FRONT = "observation.state", "observation.images.front"


def make_loop(setup, mode: str = "commands", **params):
    contract, loaded, folder = setup
    loaded.policy.reset()
    p = PolicyParams(policy_path=str(folder), policy_device="cpu", seed=0, **params)
    warnings: list[str] = []
    loop = build_tick_loop(loaded, contract, p, mode, on_time_jump=warnings.append)
    return loop, p, warnings


class Emitted:
    """The loop's `emit`: what the node would publish, kept for the test."""

    def __init__(self):
        self.calls = []

    def __call__(self, t_ns, result, ages, start, received_wall_ns):
        self.calls.append((t_ns, result, ages, received_wall_ns))

    @property
    def statuses(self):
        return [r.status for _, r, _, _ in self.calls]


def observe(loop, t_ns, seed=0):
    frame = random_frames(1, seed=seed)[0]
    loop.observe(STATE, t_ns, frame[STATE])
    loop.observe(FRONT, t_ns, frame[FRONT])


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("tick_loop")
    path = base / "c.yaml"
    path.write_text(CONTRACT.format(fps=10, p="tl", h=48, w=64))
    contract = load_contract(str(path))
    folder = cached_policy_folder(base / "policies", "act")
    return contract, load_policy(str(folder), "cpu"), folder
