"""An emulator process answers like servo hardware: within its time, however loaded the host is.

A real servo replies to a packet in well under a millisecond whatever the computer does; LeRobot's SDK gives up
on a write's status packet after ~50 ms (its patched scservo_sdk timeout), six tries in a row before a read or
write fails. An emulator scheduled like any other process on a loaded 2-core machine can miss that window: seen
twice, LeRobot's disconnect failing to write Torque_Enable to an emulated leader (six status packets missed), once
beside two busy loops and once on a slow CI host with nice -10 already in force, while the SDK's own client
busy-waits for the reply and a video encoder and a simulator share the cores.

So the `virtual-arm` / `virtual-base` processes claim servo timing where they may (root or CAP_SYS_NICE): the
process's nice value drops to -10, and each bus's serving thread (blocked in `select` but for the ~100 us a packet
takes) runs SCHED_FIFO (`VirtualBus(realtime=True)`), so the kernel runs it the moment a packet arrives, ahead of
every ordinary task and outside any CFS quota, as the servo's own microcontroller would. Where that is refused the
process runs as it is; in-process emulators (tests, benches) keep their scheduling unless they ask.
"""

from __future__ import annotations

import os

#: nice value of an emulator process (the default is 0; -10 weighs about 9x in the CFS scheduler)
EMULATOR_NICE = -10
#: SCHED_FIFO priority of a serving thread (1-99; any real-time priority runs ahead of every ordinary task)
SERVER_RT_PRIORITY = 10

#: what an emulator process got (`timing_of`), in the words an emulator's "serving" line uses
TIMING = {
    "realtime": "real-time servers: replies within the SDK's timeout under load",
    "nice": "nice -10: replies may miss the SDK's timeout on a very loaded host",
    "normal": "normal priority (no permission to raise it): replies may miss the SDK's timeout under load",
}


def raise_priority(nice: int = EMULATOR_NICE) -> bool:
    """Lower this process's nice value to `nice`; False (and no change) where that is not permitted. (Linux keeps
    nice per thread: this thread and the threads it starts afterwards, the buses' serving threads among them.)"""
    try:
        current = os.getpriority(os.PRIO_PROCESS, 0)
        if current > nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        return True
    except (PermissionError, OSError):
        return False


def make_this_thread_realtime(priority: int = SERVER_RT_PRIORITY) -> bool:
    """SCHED_FIFO for the calling thread alone; False (and no change) where that is not permitted."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))  # 0: the calling thread
        return True
    except (PermissionError, OSError, AttributeError):
        return False


def timing_of(niced: bool, buses) -> str:
    """What an emulator process got: "realtime" (every bus served from a SCHED_FIFO thread), "nice" or "normal"."""
    buses = list(buses)
    if buses and all(bus.realtime for bus in buses):
        return "realtime"
    return "nice" if niced else "normal"


__all__ = [
    "EMULATOR_NICE",
    "SERVER_RT_PRIORITY",
    "TIMING",
    "make_this_thread_realtime",
    "raise_priority",
    "timing_of",
]
