"""release_free_heap: heap freed by worker threads goes back to the OS (what keeps a recorder flat for hours)."""

import sys
import threading
import time

import pytest

from lerobot_ros.processes.memory import (
    DEFAULT_TRIM_PERIOD_S,
    TRIM_PERIOD_ENV,
    HeapTrimmer,
    HeapTrimSetupError,
    purge_mimalloc_promptly,
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
        with pytest.raises(HeapTrimSetupError, match=rf"LEROBOT_ROS_HEAP_TRIM_S='{bad}': give a period in seconds"):
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


@pytest.mark.parametrize(
    ("module", "user_value", "expected"),
    [
        ("lerobot_ros.nodes.viewer_node", None, "0"),
        ("lerobot_ros.cli.view", None, "0"),
        ("lerobot_ros.nodes.viewer_node", "250", "250"),
    ],
)
def test_viewer_processes_load_rerun_with_prompt_purge(module, user_value, expected):
    """rerun's allocator (mimalloc) reads its options when it loads: the viewer's entry points set the purge delay
    first (MIMALLOC_VERBOSE makes mimalloc print the options it started with); a user's own value wins."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "MIMALLOC_PURGE_DELAY"}
    env["MIMALLOC_VERBOSE"] = "1"
    if user_value is not None:
        env["MIMALLOC_PURGE_DELAY"] = user_value
    out = subprocess.run(
        [sys.executable, "-c", f"import {module}"], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"option 'purge_delay': {expected} " in out.stderr


def test_prompt_purge_is_a_default_not_an_override():
    env = {}
    purge_mimalloc_promptly(env)
    assert env == {"MIMALLOC_PURGE_DELAY": "0"}
    env = {"MIMALLOC_PURGE_DELAY": "500"}
    purge_mimalloc_promptly(env)
    assert env == {"MIMALLOC_PURGE_DELAY": "500"}


_ARENA_PROBE = """
import ctypes, sys, threading
from lerobot_ros.processes.memory import limit_malloc_arenas
applied = limit_malloc_arenas(int(sys.argv[1]))
barrier = threading.Barrier(6)
def work():
    keep = [bytearray(2000) for _ in range(200)]  # small blocks: from the thread's arena
    barrier.wait()  # all six alive at once: glibc would give each its own arena
    barrier.wait()
threads = [threading.Thread(target=work) for _ in range(5)]
for t in threads: t.start()
barrier.wait()
ctypes.CDLL(None).malloc_stats()  # one "Arena N:" block per arena, on stderr
barrier.wait()
for t in threads: t.join()
print(applied)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
@pytest.mark.parametrize(("count", "user_env", "applied"), [(1, None, True), (0, None, False), (1, "8", False)])
def test_malloc_arenas_capped_unless_the_user_set_them(count, user_env, applied):
    """Capped at 1: the six threads share the main arena; not capped (0, or the user's MALLOC_ARENA_MAX=8):
    glibc gives them several."""
    import os
    import re
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    if user_env:
        env["MALLOC_ARENA_MAX"] = user_env
    out = subprocess.run(
        [sys.executable, "-c", _ARENA_PROBE, str(count)], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr[-2000:]
    arenas = len(re.findall(r"^Arena \d+:", out.stderr, flags=re.M))
    assert out.stdout.strip() == str(applied)
    assert arenas == 1 if applied else arenas > 1
