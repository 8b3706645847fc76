"""An emulator process answers like servo hardware: within its time, however loaded the host is.

A real servo replies to a packet in well under a millisecond whatever the computer does; LeRobot's SDK gives up
on a status packet after ~34 ms (scservo_sdk's packet timeout: two 16 ms latency-timer periods plus the bytes),
six tries in a row before a read or write fails. An emulator scheduled like any other process on a loaded
2-core machine can miss that window (seen: LeRobot's disconnect failing to write Torque_Enable with two busy
loops beside it). So the `virtual-arm` / `virtual-base` processes raise their CPU priority when allowed (root or
CAP_SYS_NICE): the kernel then wakes them ahead of ordinary work, as the servo's own microcontroller would be.
"""

from __future__ import annotations

import os

#: nice value of an emulator process (the default is 0; -10 weighs about 9x in the CFS scheduler)
EMULATOR_NICE = -10


def raise_priority(nice: int = EMULATOR_NICE) -> bool:
    """Lower this process's nice value to `nice`; False (and no change) where that is not permitted."""
    try:
        current = os.getpriority(os.PRIO_PROCESS, 0)
        if current > nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        return True
    except (PermissionError, OSError):
        return False


__all__ = ["EMULATOR_NICE", "raise_priority"]
