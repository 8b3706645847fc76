"""lerobot_ros.sim without ROS: action checks, stepping logic, the SO-101 twin, Meta-World, start-up errors."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from lerobot_ros.sim import (
    ActionRejected,
    ActionSchedule,
    ActionValidator,
    RenderSettings,
    SimRunner,
    SimStartupError,
    make_sim,
)
from lerobot_ros.sim.so101_twin import JOINT_NAMES, SO101Twin

SMALL = RenderSettings(32, 24, shadows=False, antialias=False)


# -- action checks ------------------------------------------------------------------------------------
def test_validator_rejects_wrong_length_and_non_finite_and_counts():
    v = ActionValidator(("a", "b", "c"))
    with pytest.raises(ActionRejected, match=r"action has 2 values, expected 3 \(a, b, c\)"):
        v.check([1.0, 2.0])
    with pytest.raises(ActionRejected, match=r"NaN/inf in \['b'\]"):
        v.check([0.0, float("nan"), 0.0])
    with pytest.raises(ActionRejected, match=r"NaN/inf in \['a', 'c'\]"):
        v.check([float("inf"), 0.0, -float("inf")])
    np.testing.assert_array_equal(v.check([1, 2, 3]), [1.0, 2.0, 3.0])
    assert dict(v.rejected) == {"wrong_length": 1, "non_finite": 2}
    assert v.total_rejected == 3 and v.accepted == 1


def test_validator_reorders_named_actions():
    v = ActionValidator(("a", "b", "c"))
    np.testing.assert_array_equal(v.check_named(["c", "a", "b"], [3.0, 1.0, 2.0]), [1.0, 2.0, 3.0])
    with pytest.raises(ActionRejected, match=r"lacks \['c'\]"):
        v.check_named(["a", "b"], [1.0, 2.0])
    assert v.rejected["unknown_joints"] == 1


def test_schedule_holds_latest_and_counts_late_ticks():
    period = 10
    s = ActionSchedule(period)
    assert s.take(0) is None and s.late_ticks == 0  # nothing ever arrived: not late
    s.command(np.array([1.0]), now_ns=0)
    np.testing.assert_array_equal(s.take(5), [1.0])
    np.testing.assert_array_equal(s.take(15), [1.0])  # held, and late: nothing new for this tick
    assert s.late_ticks == 1
    s.trajectory([10, 20, 30], [np.array([2.0]), np.array([3.0]), np.array([4.0])], now_ns=100)
    assert [float(s.take(t)[0]) for t in (100, 110, 120, 130)] == [2.0, 3.0, 4.0, 4.0]
    assert s.late_ticks == 2  # only the tick after the chunk ran out
    s.trajectory([5], [np.array([9.0])], now_ns=200)  # due before the tick it arrived for: applied at once
    assert float(s.take(200)[0]) == 9.0 and s.late_ticks == 2


# -- SO-101 twin ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def twin():
    """The twin without cameras: physics only (rendering the SO-101's meshes on a CPU is slow)."""
    sim = SO101Twin(cameras=(), render=SMALL)
    yield sim
    sim.close()


@pytest.fixture(scope="module")
def twin_cam():
    sim = SO101Twin(render=SMALL)
    yield sim
    sim.close()


def test_twin_describes_itself_like_the_real_arm(twin, twin_cam):
    assert twin.state_names == JOINT_NAMES == twin.action_names
    assert twin_cam.cameras == {"front": (24, 32)} and twin.cameras == {}
    assert twin.env_state_names == ("block_x", "block_y", "block_z")


def test_twin_follows_joint_commands(twin):
    runner = SimRunner(twin)
    with pytest.raises(ActionRejected, match="reset_episode"):
        runner.step(np.zeros(6))
    frame = runner.reset(seed=None)
    np.testing.assert_allclose(frame.observation.state, 0.0, atol=1e-9)  # home: every joint at mid-range
    target = np.array([0.4, -0.3, 0.5, 0.2, -0.6, 0.8])
    for _ in range(45):  # 1.5 s at 30 fps
        frame = runner.step(target)
    np.testing.assert_allclose(frame.observation.state, target, atol=0.05)
    assert frame.stamp_ns == runner.period_ns * 46  # one period per reset and per step
    assert frame.episode.step == 45 and not frame.episode.done


def test_twin_clips_targets_to_the_joint_limits(twin):
    runner = SimRunner(twin)
    runner.reset(seed=None)
    for _ in range(45):
        frame = runner.step(np.array([5.0, 0, 0, 0, 0, 0]))
    assert frame.observation.state[0] == pytest.approx(1.91986, abs=0.05)


def test_twin_is_deterministic_for_a_seed(twin_cam):
    def run(seed):
        runner = SimRunner(twin_cam)
        frames = [runner.reset(seed=seed)]
        for i in range(5):
            frames.append(runner.step(np.full(6, 0.1 * i)))
        return frames

    a, b, c = run(7), run(7), run(8)
    assert a[0].observation.images["front"].shape == (24, 32, 3)
    for fa, fb in zip(a, b):
        np.testing.assert_array_equal(fa.observation.state, fb.observation.state)
        np.testing.assert_array_equal(fa.observation.images["front"], fb.observation.images["front"])
        assert fa.stamp_ns == fb.stamp_ns
    assert not np.array_equal(a[0].observation.env_state, c[0].observation.env_state)  # seed moves the cube


def test_episode_truncates_and_then_rejects_actions(twin):
    twin.max_episode_steps = 3
    try:
        runner = SimRunner(twin)
        runner.reset(seed=1)
        frames = [runner.step(np.zeros(6)) for _ in range(3)]
        assert [f.episode.done for f in frames] == [False, False, True] and frames[-1].truncated
        with pytest.raises(ActionRejected, match="episode 0 is done"):
            runner.step(np.zeros(6))
        assert runner.validator.rejected["episode_done"] == 1
        assert runner.reset(seed=1).episode.episode_index == 1
    finally:
        twin.max_episode_steps = 300


def test_bad_actions_are_never_stepped(twin):
    runner = SimRunner(twin)
    before = runner.reset(seed=2)
    for bad in ([0.0] * 5, [0.0] * 5 + [float("nan")], [float("inf")] * 6):
        with pytest.raises(ActionRejected):
            runner.step(bad)
    assert runner.episode.step == 0 and runner.total_steps == 0
    assert runner.sim_time_ns == before.stamp_ns
    assert dict(runner.validator.rejected) == {"wrong_length": 1, "non_finite": 2}


def test_twin_scripted_pick_lifts_the_cube():
    from lerobot_ros.sim.experts import SO101PickExpert

    sim = SO101Twin(cameras=(), render=SMALL)
    try:
        runner = SimRunner(sim)
        frame = runner.reset(seed=2)
        expert = SO101PickExpert()
        while not frame.episode.done:
            obs = frame.observation
            frame = runner.step(expert.act(obs.state, obs.env_state))
        assert frame.episode.success and frame.terminated and frame.episode.step < 120
    finally:
        sim.close()


# -- start-up errors ------------------------------------------------------------------------------------
def test_unknown_metaworld_task_suggests_names():
    with pytest.raises(SimStartupError, match=r"unknown Meta-World task 'pusj-v3': did you mean push-v3"):
        make_sim("metaworld", "pusj-v3")


def test_unknown_env_and_camera_and_scene():
    with pytest.raises(SimStartupError, match="use one of metaworld, so101, libero"):
        make_sim("gazebo")
    with pytest.raises(
        SimStartupError, match=r"camera\(s\) \['top'\] not in pick_scene.xml; it has \['front', 'wrist'\]"
    ):
        make_sim("so101", cameras=["top"]).preflight()
    with pytest.raises(SimStartupError, match="SO-101 scene 'kitchen' not found"):
        make_sim("so101", "kitchen")


@pytest.mark.skipif(importlib.util.find_spec("libero") is not None, reason="LIBERO is installed here")
def test_libero_missing_says_how_to_install():
    with pytest.raises(
        SimStartupError, match="LIBERO is not installed; install the LIBERO extra: LEROBOT_ROS_EXTRAS=libero make setup"
    ):
        make_sim("libero", "libero_spatial")


def test_missing_offscreen_gl_fails_with_a_fix_hint():
    code = "from lerobot_ros.sim.gl import ensure_offscreen_gl; ensure_offscreen_gl()"
    proc = subprocess.run(
        [sys.executable, "-c", code], env={"MUJOCO_GL": "wayland", "PATH": ""}, capture_output=True, text=True
    )
    assert proc.returncode != 0
    assert "MUJOCO_GL='wayland' is not an offscreen GL backend" in proc.stderr and "MUJOCO_GL=egl" in proc.stderr


# -- Meta-World --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def metaworld():
    sim = make_sim("metaworld", "push-v3", RenderSettings(64, 48, shadows=False))
    yield sim
    sim.close()


@pytest.mark.slow
def test_metaworld_expert_succeeds_and_runs_are_deterministic(metaworld):
    from lerobot_ros.sim.experts import MetaWorldExpert

    expert = MetaWorldExpert("metaworld-push-v3")

    def episode(seed):
        runner = SimRunner(metaworld)
        frame = runner.reset(seed=seed)
        assert frame.observation.images["corner2"].shape == (48, 64, 3)
        assert frame.observation.state.shape == (4,) and frame.observation.env_state.shape == (39,)
        np.testing.assert_array_equal(frame.observation.state, frame.observation.env_state[:4])
        frames = [frame]
        while not frame.episode.done and frame.episode.step < 150:
            frame = runner.step(expert.act(frame.observation.env_state))
            frames.append(frame)
        return frames

    a, b = episode(3), episode(3)
    assert a[-1].episode.success and a[-1].episode.done and a[-1].terminated
    assert len(a) == len(b)
    for fa, fb in zip(a, b):
        np.testing.assert_array_equal(fa.observation.images["corner2"], fb.observation.images["corner2"])
        np.testing.assert_array_equal(fa.observation.env_state, fb.observation.env_state)
        assert fa.episode.sum_reward == fb.episode.sum_reward
    assert metaworld.task == "Push the puck to a goal"


def test_twin_joints_are_radians_from_mid_range(twin):
    from lerobot_ros.sim.so101_twin import joint_mid_range

    mid = joint_mid_range(twin.model)
    assert mid[5] == pytest.approx((1.7453291995659765 - 0.17453297762778586) / 2)  # gripper: MJCF zero is off-centre
    runner = SimRunner(twin)
    runner.reset(seed=None)
    np.testing.assert_allclose(twin.data.qpos[[twin.model.joint(n).qposadr[0] for n in JOINT_NAMES]], mid)
    for _ in range(40):
        frame = runner.step(np.array([0, 0, 0, 0, 0, 0.9]))  # 0.9 rad from mid: near the open end (1.745)
    assert frame.observation.state[5] == pytest.approx(0.9, abs=0.06)


def test_libero_axis_angle_matches_lerobots_conversion():
    from lerobot_ros.sim.libero_env import _axis_angle

    s = np.sin(np.pi / 4)
    np.testing.assert_allclose(_axis_angle([0.0, 0.0, s, s]), [0.0, 0.0, np.pi / 2], atol=1e-12)
    np.testing.assert_allclose(_axis_angle([0.0, 0.0, 0.0, 1.0]), [0.0, 0.0, 0.0])


def test_bridge_large_data_dds_profile_is_applied_only_when_nothing_else_is_chosen(tmp_path, monkeypatch):
    from lerobot_ros.ros.dds import use_large_data_profile

    monkeypatch.setenv("LEROBOT_ROS_CACHE", str(tmp_path))
    env: dict[str, str] = {}
    path = use_large_data_profile(env)
    assert env["FASTDDS_DEFAULT_PROFILES_FILE"] == path and "<segment_size>33554432</segment_size>" in open(path).read()
    assert use_large_data_profile({"FASTDDS_DEFAULT_PROFILES_FILE": "/mine.xml"}) is None
    assert use_large_data_profile({"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}) is None
    assert use_large_data_profile({"LEROBOT_ROS_DDS_PROFILE": "default"}) is None
