"""RealTimeFactor: the figure the sim bridge puts on /diagnostics and warns about (pure library, no ROS)."""

from __future__ import annotations

import pytest

from lerobot_ros.sim.rtf import RealTimeFactor


def run(meter: RealTimeFactor, gaps, start=0.0, step_s=0.01) -> float:
    t = start
    meter.step(t, step_s)
    for gap in gaps:
        t += gap
        meter.step(t, step_s)
    return t


def test_factor_is_sim_time_over_wall_time_between_steps():
    meter = RealTimeFactor(1 / 30, window=10)
    assert meter.current is None and meter.mean is None
    run(meter, [1 / 15] * 10)  # half speed
    assert meter.current == pytest.approx(0.5)
    assert meter.steps_per_s == pytest.approx(15.0)
    assert meter.step_ms == pytest.approx(10.0)


def test_window_follows_recent_steps_and_mean_keeps_all():
    meter = RealTimeFactor(0.1, window=5)
    t = run(meter, [0.2] * 5)  # 0.5x
    run(meter, [0.1] * 5, start=t + 0.1)
    assert meter.current == pytest.approx(1.0)
    assert meter.mean == pytest.approx(11 * 0.1 / (5 * 0.2 + 6 * 0.1))  # 11 gaps, the one between the runs too


def test_time_across_a_reset_is_not_counted():
    meter = RealTimeFactor(0.1, window=10)
    t = run(meter, [0.1] * 3)
    meter.restart()  # a reset that takes 30 s
    run(meter, [0.1] * 3, start=t + 30.0)
    assert meter.current == pytest.approx(1.0) and meter.mean == pytest.approx(1.0)


def test_slow_warning_comes_once_and_only_after_enough_steps():
    meter = RealTimeFactor(1 / 30, window=60)
    t = run(meter, [0.1] * 10)  # 0.33x, but only 10 gaps
    assert meter.slow_warning(min_samples=30) is None
    run(meter, [0.1] * 30, start=t + 0.1)
    text = meter.slow_warning(min_samples=30)
    assert text and "0.33x real time" in text and "10.0 of 30 steps/s" in text
    assert meter.slow_warning(min_samples=30) is None  # once


def test_no_warning_at_real_time():
    meter = RealTimeFactor(1 / 30, window=60)
    run(meter, [1 / 30] * 60)
    assert meter.slow_warning() is None
    assert meter.values()["real_time_factor"] == "1.000"
