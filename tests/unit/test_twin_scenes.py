"""The two composed MuJoCo twins without ROS: two SO-101 arms at a table (bi_so101) and LeKiwi (lekiwi).

Names and order against LeRobot's classes, each arm driven on its own, a part's command editing only its share of
the action, the base following body velocities with the real base's limits, timeout and NaN stop, odometry equal to
the true pose, and the cameras (LeKiwi's wrist camera turned to portrait as LeRobot mounts it)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lerobot_ros.hardware.lekiwi import ARM_JOINTS
from lerobot_ros.mobile.omni import OmniGeometry
from lerobot_ros.sim.base import RenderSettings, SimStartupError
from lerobot_ros.sim.bi_so101_twin import PAIR_JOINTS, BiSO101Twin
from lerobot_ros.sim.bridge import SimBridge
from lerobot_ros.sim.lekiwi_twin import LeKiwiTwin
from lerobot_ros.sim.registry import expand_tasks

pytestmark = pytest.mark.slow
SMALL = RenderSettings(width=64, height=48, antialias=False)


@pytest.fixture(scope="module")
def pair():
    twin = BiSO101Twin(cameras=("front", "left_wrist", "right_wrist"), render=SMALL)
    yield twin
    twin.close()


@pytest.fixture(scope="module")
def kiwi():
    twin = LeKiwiTwin(render=SMALL)
    yield twin
    twin.close()


def test_the_pair_names_its_joints_as_lerobots_bi_so_follower():
    from lerobot.robots.bi_so_follower import BiSOFollowerConfig
    from lerobot.robots.bi_so_follower.bi_so_follower import BiSOFollower
    from lerobot.robots.so_follower import SOFollowerConfig

    arm = SOFollowerConfig(port="/dev/null")
    robot = BiSOFollower(BiSOFollowerConfig(left_arm_config=arm, right_arm_config=arm))
    lerobot_motors = [k.removesuffix(".pos") for k in robot.action_features]
    assert list(PAIR_JOINTS) == lerobot_motors


def test_each_arm_follows_its_share_of_the_action_and_the_cameras_render(pair):
    obs = pair.reset(seed=3)
    assert obs.state.shape == (12,) and np.allclose(obs.state, 0.0, atol=1e-6)
    assert {k: v.shape for k, v in obs.images.items()} == dict.fromkeys(
        ("front", "left_wrist", "right_wrist"), (48, 64, 3)
    )
    assert [pair.camera_topic(c) for c in ("front", "left_wrist", "right_wrist")] == [
        "front",
        "left/wrist",
        "right/wrist",
    ]
    block = obs.env_state
    assert 0.2 <= block[0] <= 0.35 and -0.08 <= block[1] <= 0.08  # between the arms, where both reach
    action = np.zeros(12)
    action[1], action[3] = 0.3, -0.3  # left shoulder_lift, left wrist_flex
    action[6] = 0.4  # right shoulder_pan
    for _ in range(45):
        result = pair.step(action)
    state = result.observation.state
    assert state[1] == pytest.approx(0.3, abs=0.06) and state[3] == pytest.approx(-0.3, abs=0.06)
    assert state[6] == pytest.approx(0.4, abs=0.03)
    assert abs(state[0]) < 0.03 and abs(state[7]) < 0.06  # the joints not asked stay
    left_wrist = result.observation.images["left_wrist"]
    assert not np.array_equal(left_wrist, obs.images["left_wrist"])  # the left wrist camera moved with its arm


def test_a_parts_command_edits_only_its_share_in_realtime_and_is_refused_in_lockstep(pair):
    now = {"ns": 0}
    published, rejected = [], []
    bridge = SimBridge(pair, "realtime", published.append, rejected.append, clock_ns=lambda: now["ns"])
    assert {p: names for p, (_, names) in bridge.parts.items()} == {
        "left": ARM_JOINTS,
        "right": ARM_JOINTS,
    }
    bridge.reset(0)
    bridge.part_command("left", [0.1] * 6)
    bridge.part_command("right", [-0.2] * 6)
    assert list(bridge.schedule.latest()) == [0.1] * 6 + [-0.2] * 6  # both halves, the newest of each
    bridge.part_command("left", [0.3] * 5)
    assert rejected[-1].reason == "wrong_length" and "left/commands has 5 values" in str(rejected[-1])
    bridge.part_command("right", [math.nan] * 6)
    assert rejected[-1].reason == "non_finite"
    assert list(bridge.schedule.latest()) == [0.1] * 6 + [-0.2] * 6  # refused commands change nothing
    lockstep = SimBridge(pair, "lockstep", published.append, rejected.append)
    lockstep.reset(0)
    lockstep.part_command("left", [0.0] * 6)
    assert rejected[-1].reason == "part_in_lockstep" and "send the whole action" in str(rejected[-1])


def test_lekiwi_drives_with_the_real_bases_limits_and_reports_its_true_pose(kiwi):
    obs = kiwi.reset()
    assert obs.state.shape == (6,) and kiwi.state_names == ARM_JOINTS
    assert obs.images["front"].shape == (48, 64, 3)
    assert obs.images["wrist"].shape == (64, 48, 3)  # portrait, as LeRobot's LeKiwi mounts its wrist camera
    assert obs.base is not None and (obs.base.x, obs.base.y, obs.base.yaw) == (0.0, 0.0, 0.0)
    hold = np.zeros(6)
    for _ in range(30):  # 1 s at 0.2 m/s to the left (body y), commands at every step
        assert kiwi.drive(0.0, 0.2, 0.0) is None
        base = kiwi.step(hold).observation.base
    assert base.vy == pytest.approx(0.2, abs=1e-3) and abs(base.vx) < 1e-6
    assert base.y == pytest.approx(0.2 - 0.5 * 0.2**2 / 1.0, abs=0.01)  # the 1 m/s^2 ramp costs 2 cm
    front = kiwi.step(hold).observation.images["front"]
    # commands stop: the base keeps going for the 0.5 s timeout, then ramps down
    for _ in range(12):  # 13 steps after the last command: 0.43 s
        base = kiwi.step(hold).observation.base
    assert base.vy == pytest.approx(0.2, abs=1e-3)
    for _ in range(10):  # 0.5 s passed, then 0.2 s of ramp (6 steps)
        base = kiwi.step(hold).observation.base
    assert abs(base.vy) < 1e-6
    # an arc: yaw follows at 45 deg/s and the velocity stays in the body frame (90 deg/s with 0.1 m/s ahead would
    # pass the wheels' cap: see below)
    for _ in range(30):
        kiwi.drive(0.1, 0.0, math.radians(45))
        base = kiwi.step(hold).observation.base
    assert base.wz == pytest.approx(math.radians(45), abs=1e-3) and base.vx == pytest.approx(0.1, abs=1e-3)
    ramped = sum(min(45.0, 360.0 / 30 * k) for k in range(1, 31)) / 30  # the 360 deg/s^2 ramp, stepped at 30 Hz
    assert math.degrees(base.yaw) == pytest.approx(ramped, abs=1)
    assert not np.array_equal(kiwi.step(hold).observation.images["front"], front)  # the base's camera turned
    # faster than the wheels allow: LeRobot's 3000 steps/s cap, direction kept
    for _ in range(30):
        kiwi.drive(5.0, 5.0, 0.0)
        base = kiwi.step(hold).observation.base
    capped = OmniGeometry().body_velocity(OmniGeometry().wheel_raw(kiwi.shaper.clamp(kiwi.gate.command)))
    assert base.vx == pytest.approx(capped.x, abs=1e-3) and base.vx == pytest.approx(base.vy, abs=1e-3)
    assert math.hypot(base.vx, base.vy) < 0.4
    # NaN: refused, and the base stops at once (ramping down, no waiting for the timeout)
    assert kiwi.drive(math.nan, 0.0, 0.0) == "non-finite x.vel"
    for _ in range(12):
        base = kiwi.step(hold).observation.base
    assert math.hypot(base.vx, base.vy) < 1e-6


def test_the_twins_scenes_are_checked_by_name():
    with pytest.raises(SimStartupError, match="bimanual scene 'kitchen' is not one of"):
        BiSO101Twin(scene="kitchen")
    with pytest.raises(SimStartupError, match="lekiwi scene 'x' is not one of"):
        expand_tasks("lekiwi", "x")
    assert [t.task for t in expand_tasks("bi_so101", None)] == ["table"]
