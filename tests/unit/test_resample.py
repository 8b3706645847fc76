"""Resampler: exact frames per alignment policy, ordering problems, spans, reports, live == batch."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lerobot_ros.resample import (
    EXACT,
    HELD,
    INTERP,
    MISSING,
    STALE,
    ResampleReport,
    Stream,
    StreamingResampler,
    StreamSpec,
    clean_order,
    grid_between,
    plan_stream,
    resample,
)

MS = 1_000_000
T = np.array([0, 100, 250, 260, 600]) * MS
V = np.array([0.0, 1.0, 2.0, 3.0, 4.0])[:, None]
GRID = np.arange(0, 700, 100) * MS  # fps 10


def frames(policy, tol_ms=None):
    plan = plan_stream(T, GRID, policy, None if tol_ms is None else tol_ms * MS)
    from lerobot_ros.resample import gather_numeric

    return gather_numeric(V, plan)[:, 0], plan


def test_hold():
    values, plan = frames("hold")
    np.testing.assert_array_equal(values, [0, 1, 1, 3, 3, 3, 4])
    np.testing.assert_array_equal(plan.status, [EXACT, EXACT, HELD, HELD, HELD, HELD, EXACT])
    np.testing.assert_array_equal(plan.staleness_ns // MS, [0, 0, 100, 40, 140, 240, 0])


def test_asof_marks_values_older_than_tolerance():
    values, plan = frames("asof", 150)
    np.testing.assert_array_equal(values, [0, 1, 1, 3, 3, 3, 4])
    np.testing.assert_array_equal(plan.status, [EXACT, EXACT, HELD, HELD, HELD, STALE, EXACT])


def test_nearest_and_tie_goes_to_earlier():
    values, plan = frames("nearest")
    np.testing.assert_array_equal(values, [0, 1, 2, 3, 3, 4, 4])
    np.testing.assert_array_equal(plan.staleness_ns // MS, [0, 0, 50, 40, 140, 100, 0])
    tie = plan_stream(np.array([0, 200]) * MS, np.array([100]) * MS, "nearest")
    assert tie.a[0] == 0
    _, tight = frames("nearest", 60)
    np.testing.assert_array_equal(tight.status, [EXACT, EXACT, HELD, HELD, STALE, STALE, EXACT])


def test_interpolate_linear():
    values, plan = frames("interpolate")
    expected = [0, 1, 1 + 100 / 150, 3 + 40 / 340, 3 + 140 / 340, 3 + 240 / 340, 4]
    np.testing.assert_allclose(values, expected, rtol=1e-6)
    np.testing.assert_array_equal(plan.status, [EXACT, EXACT, INTERP, INTERP, INTERP, INTERP, EXACT])


def test_interpolate_holds_across_gaps_longer_than_tolerance():
    values, plan = frames("interpolate", 200)
    np.testing.assert_allclose(values, [0, 1, 1 + 100 / 150, 3, 3, 3, 4], rtol=1e-6)
    np.testing.assert_array_equal(plan.status, [EXACT, EXACT, INTERP, HELD, HELD, STALE, EXACT])


def test_missing_before_first_sample():
    plan = plan_stream(np.array([150]) * MS, GRID[:3], "hold")
    np.testing.assert_array_equal(plan.status, [MISSING, MISSING, HELD])
    plan = plan_stream(np.array([150]) * MS, GRID[:3], "nearest")
    np.testing.assert_array_equal(plan.a, [0, 0, 0])  # nearest may use a later sample


def test_clean_order_drops_out_of_order_and_keeps_last_duplicate():
    keep, dropped, dups = clean_order(np.array([0, 200, 100, 300, 300, 400]))
    np.testing.assert_array_equal(keep, [0, 1, 4, 5])
    assert (dropped, dups) == (1, 1)


def test_grid_integer_no_drift():
    grid = grid_between(5, 5 + 10**9, 30)
    assert grid.size == 31 and grid[-1] == 5 + 10**9
    assert grid[1] - grid[0] == 33_333_333
    last = (20 * 1_000_000_000) // 30  # frame 20 lies at 666666666 ns: it belongs to the grid
    assert grid_between(0, last, 30).size == 21 and grid_between(0, last - 1, 30).size == 20


def test_batch_resample_span_images_and_report():
    state = Stream(np.array([0, 100, 200, 300, 400, 500, 600]) * MS, np.arange(7.0)[:, None] * 10, policy="interpolate")
    images = ["img50", "img160", "img240", "img90-late", "img550"]
    cam = Stream(np.array([50, 160, 240, 90, 550]) * MS, images, numeric=False, policy="nearest", tolerance_ns=100 * MS)
    out = resample({"observation.state": state, "cam": cam}, fps=10)
    np.testing.assert_array_equal(
        out.grid // MS, [50, 150, 250, 350, 450, 550]
    )  # from the latest first to earliest last sample
    np.testing.assert_allclose(out.numeric("observation.state")[:, 0], [5, 15, 25, 35, 45, 55])
    picked = [out.sample("cam", i) for i in range(out.grid.size)]
    assert picked == ["img50", "img160", "img240", "img240", "img550", "img550"]
    rep = out.report.streams["cam"]
    assert rep.dropped_out_of_order == 1 and rep.samples == 4
    assert rep.max_gap_ms == 310.0 and rep.gaps == 2  # 110 and 310 ms > 100 ms tolerance
    assert rep.stale_frames == 1  # 450 ms: nearest is 100+ ms away
    assert any("out-of-order" in w for w in out.report.warnings())
    assert out.report.streams["observation.state"].interpolated_frames == 6
    again = ResampleReport.from_dict(json.loads(out.report.to_json()))
    assert again == out.report


def test_batch_empty_stream_gives_no_frames():
    out = resample(
        {"a": Stream(np.array([0, 1]), np.zeros((2, 1))), "b": Stream(np.zeros(0, np.int64), np.zeros((0, 1)))}, fps=10
    )
    assert out.grid.size == 0 and out.report.frames == 0


def test_images_cannot_be_interpolated():
    with pytest.raises(ValueError, match="only numeric"):
        resample({"cam": Stream(np.array([0]), ["x"], numeric=False, policy="interpolate")}, fps=10)
    with pytest.raises(ValueError, match="only numeric"):
        StreamingResampler({"cam": StreamSpec("interpolate", numeric=False)})


@pytest.mark.parametrize("policy,tol", [("hold", None), ("asof", 150), ("nearest", None), ("interpolate", None)])
def test_live_equals_batch_given_the_same_samples(policy, tol):
    """Live frame at t from samples up to t == batch frame at t from the same samples."""
    live = StreamingResampler({"s": StreamSpec(policy, None if tol is None else tol * MS)})
    pushed = 0
    for t in GRID:
        while pushed < len(T) and T[pushed] <= t:
            live.push("s", int(T[pushed]), V[pushed])
            pushed += 1
        frame = live.frame_at(int(t))
        batch = plan_stream(T[:pushed], np.array([t]), policy, None if tol is None else tol * MS)
        from lerobot_ros.resample import gather_numeric

        expected = gather_numeric(V[:pushed], batch)[0]
        np.testing.assert_allclose(np.asarray(frame.values["s"], np.float32).reshape(-1), expected)


def test_live_readiness_reasons_and_out_of_order():
    live = StreamingResampler(
        {"state": StreamSpec("asof", 50 * MS), "cam": StreamSpec("nearest", 50 * MS, numeric=False)}
    )
    f = live.frame_at(0)
    assert not f.ready and "state: no sample yet" in f.reasons
    live.push("state", 100 * MS, np.array([1.0]))
    live.push("cam", 100 * MS, "frame-a")
    assert live.push("state", 50 * MS, np.array([9.0])) is False
    assert live.reports["state"].dropped_out_of_order == 1
    f = live.frame_at(120 * MS)
    assert f.ready and f.values["cam"] == "frame-a" and f.status["state"] == "held"
    f = live.frame_at(200 * MS)
    assert not f.ready and any(r.startswith("state: newest sample is 100.0 ms old") for r in f.reasons)


@pytest.mark.parametrize("policy", ["hold", "asof", "nearest", "interpolate"])
@pytest.mark.parametrize("tol_ms", [None, 40])
def test_plan_one_equals_plan_stream(policy, tol_ms):
    """The live single-frame planner follows the batch planner's rules exactly, frame by frame."""
    from lerobot_ros.resample.core import plan_one

    rng = np.random.default_rng(7)
    tol = None if tol_ms is None else tol_ms * MS
    for _ in range(40):
        times = np.unique(rng.integers(0, 1000, size=rng.integers(0, 12))) * MS
        grid = np.concatenate([rng.integers(-50, 1100, size=25) * MS, times[:3]])  # also exact hits
        plan = plan_stream(times, grid, policy, tol)
        for i, t in enumerate(grid):
            a, b, w, status, staleness = plan_one(times.tolist(), int(t), policy, tol)
            expected = (plan.a[i], plan.b[i], plan.w[i], plan.status[i], plan.staleness_ns[i])
            assert (a, b, status, staleness) == tuple(
                int(x) for x in (expected[0], expected[1], expected[3], expected[4])
            )
            assert w == expected[2]


def test_live_report_counts_match_batch():
    from lerobot_ros.resample import StreamReport

    live = StreamingResampler({"s": StreamSpec("asof", 150 * MS)})
    pushed = 0
    batch = StreamReport("s", "asof", 150.0)
    for t in GRID:
        while pushed < len(T) and T[pushed] <= t:
            live.push("s", int(T[pushed]), V[pushed])
            pushed += 1
        live.frame_at(int(t))
        batch.add_frames(plan_stream(T[:pushed], np.array([t]), "asof", 150 * MS))
    got = live.reports["s"]
    for key in ("frames", "exact_frames", "held_frames", "stale_frames", "missing_frames", "held_old_frames"):
        assert getattr(got, key) == getattr(batch, key), key
    assert got.max_staleness_ms == pytest.approx(batch.max_staleness_ms)
    # the mean accumulates over calls in both forms, and equals one batch call over the whole grid
    whole = StreamReport("s", "asof", 150.0)
    whole.add_frames(plan_stream(T, GRID, "asof", 150 * MS))
    assert got.mean_staleness_ms == pytest.approx(batch.mean_staleness_ms) == pytest.approx(whole.mean_staleness_ms)


def test_a_hold_stream_slower_than_the_frames_is_reported_as_held_old_data():
    """Commands at 4 Hz recorded into 30 fps frames: most frames repeat a command older than the 100 ms tolerance.
    Before, `hold` streams were left out of the warnings, and such a dataset converted without a word."""
    from lerobot_ros.resample import StreamReport

    grid = grid_between(0, 10_000 * MS, 30)  # 301 frames over 10 s
    slow = np.arange(0, 10_001, 250) * MS  # 4 Hz
    report = StreamReport("action", "hold", 100.0)
    report.add_sample_stats(slow)
    report.add_frames(plan_stream(slow, grid, "hold", 100 * MS))
    # frames 100..250 ms after each command (k/30 s past it, k = 4..7) hold an old one: 4 of every 7.5
    expected = sum(1 for t in grid if (t % (250 * MS)) > 100 * MS)
    assert report.held_old_frames == expected and report.held_old_share == pytest.approx(expected / 301)
    (warning,) = [w for w in report.warnings() if "repeat a sample" in w]
    assert warning == (
        f"action: {expected} of 301 frames ({round(100 * expected / 301)} %) repeat a sample older than 100 ms "
        "(it ran at 4.0 Hz); those frames hold stale values (limit 20 %)"
    )
    fast = np.arange(0, 10_001, 33) * MS  # ~30 Hz: never older than 100 ms
    ok = StreamReport("action", "hold", 100.0)
    ok.add_frames(plan_stream(fast, grid, "hold", 100 * MS))
    assert ok.held_old_frames == 0 and ok.warnings() == []
    # interpolated frames are not held data, whatever the sample rate
    smooth = StreamReport("state", "interpolate", 300.0)
    smooth.add_frames(plan_stream(slow, grid, "interpolate", 300 * MS))
    assert smooth.held_old_frames == 0
    # without a tolerance, "old" means older than 100 ms
    untimed = StreamReport("action", "hold", None)
    untimed.add_frames(plan_stream(slow, grid, "hold"))
    assert untimed.held_old_frames == expected
