"""Give freed heap back to the operating system in a long-running node.

Message buffers are allocated and freed by several threads (DDS receive threads, a bag writer, an inference
thread); glibc keeps what was freed in its per-thread arenas for reuse, so it stays resident although nothing
uses it. `malloc_trim(0)` hands those free pages back (every arena, not just the top of the main heap, since
glibc 2.8). Measured on the soak's processes: the twin 473 -> 375 MB at its first trim (MuJoCo's and the
renderer's start-up buffers), the policy node 5 MB back every 30 s, the recorder ~7 MB after an episode.
Each call took 0.1-1.5 ms (38 ms the first time in the twin). Elsewhere (musl, macOS) it does nothing.

`run_node` caps glibc's arenas (`limit_malloc_arenas`, unless MALLOC_ARENA_MAX is set) and starts a `HeapTrimmer`
in every node process: LEROBOT_ROS_HEAP_TRIM_S sets its period (default 30 s; 0 turns it off).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys

from lerobot_ros.processes.periodic import PeriodicThread


@functools.cache
def _libc_function(name: str, argtypes: list, restype):
    """A glibc function by name (malloc_trim, mallopt), or None where the C library has none (musl, macOS)."""
    try:
        function = getattr(ctypes.CDLL(ctypes.util.find_library("c")), name)
    except (OSError, AttributeError, TypeError):
        return None
    function.argtypes, function.restype = argtypes, restype
    return function


def _malloc_trim():
    return _libc_function("malloc_trim", (ctypes.c_size_t,), ctypes.c_int)


def release_free_heap() -> bool:
    """Return free heap pages to the OS; True when some memory was released, False when none (or unsupported)."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


ARENAS_ENV = "MALLOC_ARENA_MAX"  # glibc's own variable: a user who sets it keeps it
DEFAULT_ARENAS = 2
_M_ARENA_MAX = -8  # mallopt parameter (malloc.h)


def limit_malloc_arenas(count: int = DEFAULT_ARENAS, env=os.environ) -> bool:
    """Cap glibc's malloc arenas at `count` for the threads created from now on (call it before a node's DDS
    threads start), unless MALLOC_ARENA_MAX is set (glibc read it at start-up). glibc gives threads up to
    8 per core their own arena, and a thread started later (the recorder's bag writer, one per episode) can
    land in a fresh one: in a 20 min soak the recorder's heap grew 2.4 MB, 1.5 of them in an arena that appeared
    mid-run, none of it free memory a trim could return. True when the cap was applied."""
    mallopt = _libc_function("mallopt", (ctypes.c_int, ctypes.c_int), ctypes.c_int)
    if env.get(ARENAS_ENV) or count <= 0 or mallopt is None:
        return False
    return bool(mallopt(_M_ARENA_MAX, int(count)))


def purge_mimalloc_promptly(env=os.environ) -> bool:
    """Have mimalloc hand freed pages back at once rather than after its purge delay; call it before the
    library that links mimalloc loads (rerun: its Rust side allocates with mimalloc, which reads its options
    when it starts). A process logging two 30 Hz cameras into a 32 MiB rerun server crept from 138 to 154 MB of
    heap over four minutes after its buffer was full; with MIMALLOC_PURGE_DELAY=0 it stayed at 128 MB from the
    first minute on. A value the user set wins. False when rerun was already loaded (too late to matter)."""
    env.setdefault("MIMALLOC_PURGE_DELAY", "0")
    return "rerun_bindings" not in sys.modules


TRIM_PERIOD_ENV = "LEROBOT_ROS_HEAP_TRIM_S"
DEFAULT_TRIM_PERIOD_S = 30.0


class HeapTrimSetupError(ValueError):
    """LEROBOT_ROS_HEAP_TRIM_S is not a period: the node stops at start with this one line."""


def trim_period_s(env=os.environ) -> float:
    """The period LEROBOT_ROS_HEAP_TRIM_S asks for (seconds; 0: off). HeapTrimSetupError names a bad value."""
    text = env.get(TRIM_PERIOD_ENV, "").strip()
    if not text:
        return DEFAULT_TRIM_PERIOD_S
    try:
        period = float(text)
    except ValueError:
        period = -1.0
    if not period >= 0.0 or period == float("inf"):
        raise HeapTrimSetupError(f"{TRIM_PERIOD_ENV}={text!r}: give a period in seconds (e.g. 30), or 0 to turn it off")
    return period


class HeapTrimmer(PeriodicThread):
    """A daemon thread that calls `release_free_heap` every `period_s`: a node's resident memory stays at what
    it uses over hours instead of creeping up with what its threads once freed. A thread rather than an
    executor timer: the trim takes no GIL (ctypes releases it) and never delays a callback."""

    def __init__(self, period_s: float = DEFAULT_TRIM_PERIOD_S):
        super().__init__(release_free_heap, period_s, name="heap-trim")

    def start(self) -> HeapTrimmer:
        """Start trimming; a period of 0 (off) or a C library without malloc_trim starts nothing."""
        if self.period_s > 0 and _malloc_trim() is not None:
            super().start()
        return self

    @property
    def trims(self) -> int:
        return self.calls


__all__ = [
    "ARENAS_ENV",
    "DEFAULT_ARENAS",
    "DEFAULT_TRIM_PERIOD_S",
    "TRIM_PERIOD_ENV",
    "HeapTrimSetupError",
    "HeapTrimmer",
    "limit_malloc_arenas",
    "purge_mimalloc_promptly",
    "release_free_heap",
    "trim_period_s",
]
