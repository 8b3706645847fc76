"""release_free_heap: heap freed by worker threads goes back to the OS (what keeps a recorder flat for hours)."""

import sys
import threading
import time

import pytest

from lerobot_ros.processes.memory import (
    DEFAULT_TRIM_PERIOD_S,
    TRIM_PERIOD_ENV,
    HeapTrimmer,
    release_free_heap,
    trim_period_s,
)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 1e6


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_heap_freed_in_threads_returns_to_the_os():
    kept: list[bytearray] = []

    def churn() -> None:
        buffers = [bytearray(40_000) for _ in range(2500)]  # below the mmap threshold: from the thread's arena
        kept.extend(buffers[-2:])  # a few survive, as a bag writer's last chunk would

    threads = [threading.Thread(target=churn) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    before = _rss_mb()
    assert release_free_heap() is True
    after = _rss_mb()
    # ~300 MB were allocated and freed; glibc kept most of it resident until trimmed
    assert before - after > 100, f"RSS {before:.0f} -> {after:.0f} MB"
    assert len(kept) == 6 and all(len(b) == 40_000 for b in kept)


def test_trim_period_from_the_environment():
    assert trim_period_s({}) == DEFAULT_TRIM_PERIOD_S == 30.0
    assert trim_period_s({TRIM_PERIOD_ENV: " 2.5 "}) == 2.5
    assert trim_period_s({TRIM_PERIOD_ENV: "0"}) == 0.0
    for bad in ("-1", "soon", "nan", "inf"):
        with pytest.raises(ValueError, match=rf"LEROBOT_ROS_HEAP_TRIM_S='{bad}': give a period in seconds"):
            trim_period_s({TRIM_PERIOD_ENV: bad})


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_trimmer_runs_until_stopped_and_zero_turns_it_off():
    trimmer = HeapTrimmer(0.01).start()
    deadline = time.monotonic() + 30
    while trimmer.trims < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert trimmer.trims >= 3 and trimmer.running
    trimmer.stop()
    assert not trimmer.running
    count = trimmer.trims
    time.sleep(0.05)
    assert trimmer.trims == count  # stopped means stopped
    off = HeapTrimmer(0.0).start()
    assert not off.running and off.trims == 0
    off.stop()
