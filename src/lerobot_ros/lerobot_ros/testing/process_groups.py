"""Helpers for tests that check no process outlived its supervisor (reads /proc; Linux)."""

from __future__ import annotations

import os

from lerobot_ros.ros.runtime import wait_until


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
    try:
        wait_until(lambda: all(group_gone(p) for p in pgids), timeout, interval=0.05, what="process groups to go")
    except TimeoutError:
        return False
    return True
