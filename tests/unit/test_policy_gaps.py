"""A gap in the observations (link down, camera lost, a host restarting), in the policy's tick loop without ROS:
gated ticks say why (WARN on /diagnostics), the actions queued before the gap are thrown away (inline: the
policy's own queue; async: the chunk queue and any inference in flight), so the first action after the gap
comes from a chunk predicted on a frame from after it. Real small random ACT (lerobot_ros.testing.policies)."""

from __future__ import annotations

import numpy as np

from lerobot_ros.policy.tick_loop import OK, WARN
from lerobot_ros.testing.policy_harness import PERIOD, T0
from lerobot_ros.testing.tick_loop_harness import FRONT, STATE, Emitted, make_loop, observe


def _gap(loop, emit, start_tick: int, ticks: int) -> int:
    """Run `ticks` ticks without new observations; returns the next tick index."""
    for k in range(start_tick, start_tick + ticks):
        loop.run(T0 + k * PERIOD, emit)
    return start_tick + ticks


def test_inline_gap_discards_the_policy_queue_and_warns(setup):
    loop, _, _ = make_loop(setup, max_age_ms=250.0)  # 10 Hz contract: stale after 2.5 ticks
    emit = Emitted()
    observe(loop, T0)
    loop.run(T0, emit)
    first = emit.calls[-1][1]
    assert first.status == "ok" and first.plan is not None  # a chunk predicted; the rest waits in ACT's queue
    observe(loop, T0 + PERIOD, seed=1)
    loop.run(T0 + PERIOD, emit)
    assert emit.calls[-1][1].plan is None  # popped from the queue, as lerobot-record does
    k = _gap(loop, emit, 2, 5)
    assert emit.statuses[-1] == "held" and "stale" in emit.calls[-1][1].reason
    level, message = loop.status()
    assert level == WARN and message.startswith("holding the last action: stale:") and FRONT in message
    assert loop.controller.discards == 1  # once per gap, not per gated tick
    assert loop.diagnostic_values(T0 + k * PERIOD, 0.0)["queue_discards"] == "1"
    observe(loop, T0 + k * PERIOD, seed=7)
    loop.run(T0 + k * PERIOD, emit)
    after = emit.calls[-1][1]
    assert after.status == "ok" and after.plan is not None, "acted from the queue computed before the gap"
    assert loop.status() == (OK, "ok")


def test_a_gap_in_trajectory_mode_replaces_the_running_trajectory_with_a_hold(setup):
    """Trajectory mode: the controller runs the whole trajectory it was sent, planned before the gap; the first
    gated tick sends a one-point trajectory at what it commands now (the arm holds), then nothing until fresh
    frames; the next chunk's change limit starts there."""
    loop, _, _ = make_loop(setup, "trajectory", max_age_ms=250.0, max_delta=[0.5])
    emit = Emitted()
    observe(loop, T0)
    loop.run(T0, emit)
    sent = emit.calls[-1][1].trajectory
    assert sent is not None and len(sent) > 4
    observe(loop, T0 + PERIOD, seed=1)
    loop.run(T0 + PERIOD, emit)
    assert emit.calls[-1][1].trajectory is None  # the controller executes the trajectory it has
    k = _gap(loop, emit, 2, 4)  # stale from tick 4 on (250 ms at 10 Hz after the frame of tick 1)
    results = [r for _, r, _, _ in emit.calls[2:]]
    holds = [(i + 2, r) for i, r in enumerate(results) if r.trajectory is not None]
    assert len(holds) == 1, "one hold per gap"
    at, hold = holds[0]
    assert hold.status == "held" and "holding the arm where it is" in hold.reason
    np.testing.assert_array_equal(hold.trajectory, sent[at][None, :])
    observe(loop, T0 + k * PERIOD, seed=7)
    loop.run(T0 + k * PERIOD, emit)
    after = emit.calls[-1][1].trajectory
    assert after is not None and np.all(np.abs(after[0] - sent[at]) <= 0.5 + 1e-9)


def test_stop_then_start_predicts_from_a_frame_after_the_stop(setup):
    """~/stop in mid-chunk, ~/start later: ACT's queue still held the old plan's actions; the first tick after the
    start must predict a new chunk (the arm may have been moved meanwhile), as after any gap."""
    loop, _, _ = make_loop(setup)
    emit = Emitted()
    observe(loop, T0)
    loop.run(T0, emit)
    assert emit.calls[-1][1].plan is not None  # a chunk predicted; the rest waits in ACT's queue
    loop.running = False
    for k in (1, 2, 3):
        loop.run(T0 + k * PERIOD, emit)
    assert emit.statuses[-3:] == ["stopped"] * 3 and loop.controller.discards == 1  # once per stop
    loop.running = True
    observe(loop, T0 + 4 * PERIOD, seed=3)
    loop.run(T0 + 4 * PERIOD, emit)
    after = emit.calls[-1][1]
    assert after.status == "ok" and after.plan is not None, "acted from the queue computed before the stop"


def test_stop_in_trajectory_mode_replaces_the_running_trajectory_with_a_hold(setup):
    """~/stop while the controller runs a trajectory: it would carry on to the trajectory's end (a second of motion
    planned before the stop); the first stopped tick sends a one-point trajectory at what it commands now."""
    loop, _, _ = make_loop(setup, "trajectory")
    emit = Emitted()
    observe(loop, T0)
    loop.run(T0, emit)
    sent = emit.calls[-1][1].trajectory
    assert sent is not None and len(sent) > 4
    loop.running = False
    for k in (1, 2, 3):
        loop.run(T0 + k * PERIOD, emit)
    stopped = [r for _, r, _, _ in emit.calls[1:]]
    assert [r.status for r in stopped] == ["stopped"] * 3
    assert [r.trajectory is not None for r in stopped] == [True, False, False], "one hold per stop"
    np.testing.assert_array_equal(stopped[0].trajectory, sent[1][None, :])
    assert "holding the arm where it is" in stopped[0].reason
    loop.running = True
    observe(loop, T0 + 4 * PERIOD, seed=3)
    loop.run(T0 + 4 * PERIOD, emit)
    assert emit.calls[-1][1].status == "ok" and emit.calls[-1][1].trajectory is not None


def test_async_gap_discards_queued_and_in_flight_chunks(setup):
    loop, _, _ = make_loop(setup, max_age_ms=250.0, async_inference=True, chunk_threshold=1.0)
    worker = loop.controller.worker
    frames_predicted = []
    predict = worker.predict

    def spy(frame, task):  # records which frame each inference started from
        frames_predicted.append(float(np.asarray(frame[STATE])[0]))
        return predict(frame, task)

    worker.predict = spy
    emit = Emitted()
    try:
        k = 0
        while not (emit.statuses and emit.statuses[-1] == "ok"):
            observe(loop, T0 + k * PERIOD, seed=k)
            loop.run(T0 + k * PERIOD, emit)
            worker.wait_idle(30.0)
            k += 1
            assert k < 20
        assert worker.queue.depth() > 0
        k = _gap(loop, emit, k, 4)
        assert emit.statuses[-1] in ("gated", "held") and worker.queue.depth() == 0
        assert loop.controller.discards == 1
        resume = T0 + k * PERIOD
        observe(loop, resume, seed=99)
        fresh_state = float(loop.resampler.frame_at(resume).values[STATE][0])
        n_before = len(frames_predicted)
        statuses = []
        for j in range(k, k + 10):
            if j > k:
                observe(loop, T0 + j * PERIOD, seed=99)
            loop.run(T0 + j * PERIOD, emit)
            statuses.append(emit.statuses[-1])
            if statuses[-1] == "ok":
                break
            worker.wait_idle(30.0)
        assert statuses[-1] == "ok"
        # every action after the gap comes from an inference on a frame observed after it
        assert frames_predicted[n_before:] and frames_predicted[n_before] == fresh_state
        assert worker.queue.depth() <= worker.chunk_length
    finally:
        loop.controller.close()
