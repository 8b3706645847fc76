"""lerobot_ros.sim.bridge without ROS, on the real SO-101 twin (physics only): lockstep and realtime routing,
trajectories, rejections, ticks, reset options, diagnostics report, start-up errors."""

from __future__ import annotations

import numpy as np
import pytest

from lerobot_ros.sim import ActionRejected, RenderSettings, SimStartupError
from lerobot_ros.sim.bridge import SimBridge, describe_rejection, open_sim, parse_reset_options
from lerobot_ros.sim.so101_twin import JOINT_NAMES, SO101Twin

SMALL = RenderSettings(32, 24, shadows=False, antialias=False)


class RecordingTwin(SO101Twin):
    """The real twin (physics only), remembering the actions it stepped."""

    def __init__(self):
        super().__init__(cameras=(), render=SMALL)
        self.stepped: list[np.ndarray] = []

    def step(self, action):
        self.stepped.append(np.array(action))
        return super().step(action)


class Recorder:
    """The node's side of the bridge: what was published and rejected, and a wall clock the test moves."""

    def __init__(self):
        self.frames, self.rejections, self.now = [], [], 0

    def bridge(self, mode: str, episode_limit: str = "enforced") -> SimBridge:
        return SimBridge(
            RecordingTwin(),
            mode,
            publish=self.frames.append,
            rejected=self.rejections.append,
            clock_ns=lambda: self.now,
            episode_limit=episode_limit,
        )


@pytest.fixture
def rec():
    return Recorder()


@pytest.fixture
def lockstep(rec):
    bridge = rec.bridge("lockstep")
    yield bridge
    bridge.close()


@pytest.fixture
def realtime(rec):
    bridge = rec.bridge("realtime")
    yield bridge
    bridge.close()


def test_open_sim_drops_none_cameras_and_unknown_modes_fail(rec):
    sim = open_sim("so101", "", SMALL, cameras=["none", ""])
    assert sim.cameras == {}
    with pytest.raises(ValueError, match="mode must be one of"):
        SimBridge(sim, "fast", publish=rec.frames.append, rejected=rec.rejections.append)
    sim.close()
    with pytest.raises(SimStartupError):
        open_sim("so101", "no_such_scene", SMALL, cameras=[])


def test_lockstep_steps_and_publishes_once_per_command(rec, lockstep):
    lockstep.command(np.zeros(6))  # before any episode: rejected, counted, never stepped
    assert [e.reason for e in rec.rejections] == ["no_episode"] and not rec.frames
    frame = lockstep.reset(-1)  # < 0: unseeded
    assert frame.episode.seed is None and lockstep.started and not rec.frames  # the caller publishes resets
    lockstep.command(np.full(6, 0.1))
    lockstep.command(np.zeros(5))
    lockstep.command([0, 0, float("nan"), 0, 0, 0])
    assert [f.episode.step for f in rec.frames] == [1]
    assert [e.reason for e in rec.rejections] == ["no_episode", "wrong_length", "non_finite"]
    assert lockstep.counters == {
        "accepted": 1,
        "rejected": {"no_episode": 1, "wrong_length": 1, "non_finite": 1},
        "steps": 1,
        "late_ticks": 0,
    }
    lockstep.malformed("bad layout")
    assert rec.rejections[-1].reason == "malformed" and lockstep.counters["rejected"]["malformed"] == 1


def test_lockstep_trajectory_steps_each_point_and_reorders_names(rec, lockstep):
    lockstep.reset(3)
    names = list(reversed(JOINT_NAMES))
    positions = np.array([[0.1 * i] * 5 + [0.2 * i] for i in range(1, 4)])  # JOINT_NAMES[0] is named last here
    lockstep.trajectory(names, [10, 20, 30], positions)
    assert [f.episode.step for f in rec.frames] == [1, 2, 3]
    np.testing.assert_allclose(lockstep.sim.stepped[0], [0.2] + [0.1] * 5)  # reordered to the action's order
    lockstep.trajectory(JOINT_NAMES[:3], [10], positions[:1, :3])  # names missing joints: nothing stepped
    assert [e.reason for e in rec.rejections] == ["unknown_joints"] and len(rec.frames) == 3
    lockstep.trajectory(JOINT_NAMES, [], np.zeros((0, 6)))  # empty: nothing at all
    assert len(rec.frames) == 3 and len(rec.rejections) == 1


def test_lockstep_trajectory_stops_at_the_end_of_the_episode(rec):
    bridge = rec.bridge("lockstep")
    bridge.sim.max_episode_steps = 2
    bridge.reset(0)
    bridge.trajectory([], [10, 20, 30, 40], np.zeros((4, 6)))
    assert [f.episode.step for f in rec.frames] == [1, 2] and rec.frames[-1].episode.done
    assert [e.reason for e in rec.rejections] == ["episode_done"]
    text, expected = describe_rejection(rec.rejections[0], bridge.runner)
    assert expected and "episode_done=1" in text and "call reset_episode" in text
    bridge.close()


def test_a_marked_episode_limit_keeps_stepping_and_obeying_like_a_real_arm(rec):
    bridge = rec.bridge("realtime", episode_limit="marked")
    bridge.sim.max_episode_steps = 2
    bridge.reset(0)
    for _ in range(4):
        bridge.tick()
    bridge.command(np.full(6, 0.1))  # past the limit: still obeyed, not rejected
    bridge.tick()
    assert [f.episode.step for f in rec.frames] == [1, 2, 3, 4, 5]
    assert [f.episode.done for f in rec.frames] == [False, True, True, True, True]  # marked at the limit
    assert rec.rejections == [] and float(bridge.sim.stepped[-1][0]) == pytest.approx(0.1)
    bridge.close()


def test_a_marked_episode_limit_is_refused_for_a_simulator_that_cannot_step_past_it(rec, monkeypatch):
    monkeypatch.setattr(RecordingTwin, "steps_past_limit", False)
    with pytest.raises(ValueError, match="episode_limit:=marked needs a simulator that can step past"):
        rec.bridge("realtime", episode_limit="marked")


def test_realtime_schedules_commands_for_ticks_and_holds(rec, realtime):
    assert realtime.tick() is None and not rec.frames  # no episode yet: ticks do nothing
    realtime.reset(0)
    realtime.command(np.full(6, 0.2))
    assert not rec.frames  # nothing is stepped until a tick
    realtime.tick()
    realtime.tick()  # no new action: the held one, counted as late
    assert [f.episode.step for f in rec.frames] == [1, 2] and realtime.counters["late_ticks"] == 1
    np.testing.assert_array_equal(realtime.sim.stepped, np.full((2, 6), 0.2))
    realtime.command(np.zeros(4))  # rejected at once, the held action stays
    realtime.tick()
    assert rec.rejections[-1].reason == "wrong_length" and float(realtime.sim.stepped[-1][0]) == 0.2


def test_realtime_trajectory_points_are_due_on_their_times(rec, realtime):
    realtime.reset(0)
    period = realtime.runner.period_ns
    rec.now = 1_000
    # point i due at receipt + time_from_start_i - period: the first point is for the next tick
    realtime.trajectory([], [period, 2 * period], np.array([[0.1] * 6, [0.3] * 6]))
    for i in range(3):
        rec.now = 1_000 + i * period
        realtime.tick()
    assert [float(a[0]) for a in realtime.sim.stepped] == [0.1, 0.3, 0.3] and realtime.counters["late_ticks"] == 1
    assert realtime.counters["accepted"] == 2  # each point once (the episode check counts nothing)
    realtime.trajectory([], [period], np.array([[np.inf] * 6]))  # one bad point rejects the trajectory
    realtime.tick()
    assert rec.rejections[-1].reason == "non_finite" and float(realtime.sim.stepped[-1][0]) == 0.3


def test_realtime_idle_action_holds_the_joints_before_any_command(rec, realtime):
    frame = realtime.reset(0)
    realtime.tick()
    assert rec.frames[0].episode.step == 1
    np.testing.assert_array_equal(realtime.sim.stepped[0], frame.observation.state)  # hold where the reset left it


def test_realtime_without_actions_holds_one_target_instead_of_sagging(rec, realtime):
    """Re-taking the measured joints as the target each tick let the position actuators settle a little lower each
    step under gravity: the twin drooped 0.4 rad in 10 s with nothing driving it."""
    frame = realtime.reset(0)
    for _ in range(300):  # 10 s at 30 fps
        rec.now += realtime.runner.period_ns
        realtime.tick()
    stepped = np.stack(realtime.sim.stepped)
    assert np.all(stepped == frame.observation.state)  # one target, the joints where the episode began
    drift = np.abs(rec.frames[-1].observation.state - rec.frames[30].observation.state).max()
    assert drift < 0.01, f"the idle arm moved {drift:.3f} rad between 1 s and 10 s"


def test_close_stops_ticks_and_is_idempotent(rec, realtime):
    realtime.reset(0)
    realtime.close()
    realtime.close()
    assert realtime.closed and realtime.tick() is None and not rec.frames


def test_report_warns_only_when_realtime_falls_behind(rec, lockstep, realtime):
    report = lockstep.report()
    assert not report.slow and report.message.startswith("real-time factor") and "(lockstep)" in report.message
    assert report.values["mode"] == "lockstep" and report.values["steps"] == "0"
    assert all(isinstance(v, str) for v in report.values.values())
    realtime.reset(0)
    rtf = realtime.runner.rtf
    for i in range(31):  # what the meter reads when each step takes a whole second of wall time
        rtf.step(float(i))
    assert realtime.report().slow and realtime.report().values["mode"] == "realtime"
    for i in range(31):
        lockstep.runner.rtf.step(float(i))
    assert not lockstep.report().slow  # lockstep has no real-time promise to miss


def test_reset_options_are_a_json_object_or_nothing():
    assert parse_reset_options("") is None and parse_reset_options("  ") is None
    assert parse_reset_options('{"block_xy": [0.1, 0.2]}') == {"block_xy": [0.1, 0.2]}
    with pytest.raises(ValueError, match="JSON object"):
        parse_reset_options("[1, 2]")
    with pytest.raises(ValueError):
        parse_reset_options("{not json")


def test_describe_names_the_mode_fps_and_render(lockstep):
    line = lockstep.describe(SMALL)
    assert line.startswith("so101 bridge (lockstep)") and "32x24" in line and "shadows off" in line


def test_rejections_other_than_a_finished_episode_are_warnings(rec, lockstep):
    lockstep.reset(0)
    lockstep.command([1.0])
    text, expected = describe_rejection(rec.rejections[0], lockstep.runner)
    assert not expected and "wrong_length=1" in text
    assert isinstance(rec.rejections[0], ActionRejected)
