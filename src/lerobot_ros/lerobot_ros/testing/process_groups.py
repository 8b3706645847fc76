"""Helpers for tests of processes: none outlived its supervisor (reads /proc; Linux), and each stopped cleanly."""

from __future__ import annotations

import os
import signal
import subprocess

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


def interrupt_and_collect(procs, timeout: float = 30.0) -> list[tuple[int, str]]:
    """Ctrl-C every process in `procs` (Popen with stderr=PIPE, text=True), then (exit status, stderr) of each.
    stderr is read while waiting, so a chatty process cannot block on a full pipe. One that has not exited after
    `timeout` gets SIGABRT: with PYTHONFAULTHANDLER set (the `ros_env` fixture) it prints every thread's stack
    before it dies, so a hang at shutdown shows where it hung instead of only that it did."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    results = []
    for proc in procs:
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            try:
                _, err = proc.communicate(timeout=10.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
            err = f"(still running {timeout:g} s after Ctrl-C; its stacks at SIGABRT follow)\n{err}"
        results.append((proc.returncode, err or ""))
    return results
