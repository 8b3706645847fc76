"""Helpers for tests that check no process outlived its supervisor (reads /proc; Linux)."""

from __future__ import annotations

import os
import time


def group_gone(pgid: int) -> bool:
    """No live process is left in process group `pgid` (zombies orphaned to a non-reaping init are dead)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                return False
    return True


def pid_alive(pid: int) -> bool:
    """`pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def groups_gone(pgids, timeout: float = 10.0) -> bool:
    """Every group in `pgids` is gone within `timeout` (a SIGKILLed process takes a moment to exit)."""
    deadline = time.monotonic() + timeout
    while not all(group_gone(p) for p in pgids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
