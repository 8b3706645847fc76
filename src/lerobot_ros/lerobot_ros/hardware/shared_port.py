"""One lock per serial port in this process: two drivers on one bus (LeKiwi's arm and wheels, ids 1-6 and 7-9
on one Feetech bus) take turns for whole transactions, so a reply is read by the driver that asked for it.

Each driver keeps its own LeRobot bus object; what they share is the wire. Drivers in different processes
cannot share a port (the OS does not stop two processes from opening it, but their bytes would interleave):
lekiwi_node runs both in one process for that reason.
"""

from __future__ import annotations

import os
import threading

_LOCKS: dict[str, threading.RLock] = {}
_GUARD = threading.Lock()


def port_lock(port: str | os.PathLike) -> threading.RLock:
    """The lock of `port` (by its absolute path, as given: a pty link keeps its name across a replug)."""
    key = os.path.abspath(os.fspath(port)) if os.fspath(port) else ""
    with _GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = threading.RLock()
        return lock
