"""An emulator process answers like servo hardware: within its time, however loaded the host is.

A real servo replies to a packet in well under a millisecond whatever the computer does; LeRobot's SDK gives up
on a write's status packet after ~50 ms (its patched scservo_sdk timeout), six tries in a row before a read or
write fails. An emulator scheduled like any other process on a loaded 2-core machine can miss that window: seen
twice, LeRobot's disconnect failing to write Torque_Enable to an emulated leader (six status packets missed), once
beside two busy loops and once on a slow CI host with nice -10 already in force, while the SDK's own client
busy-waits for the reply and a video encoder and a simulator share the cores.

So the `virtual-arm` / `virtual-base` processes claim servo timing where they may (root or CAP_SYS_NICE): the
process's nice value drops to -10, and each bus's serving thread (blocked in `select` but for the ~100 us a packet
takes) runs SCHED_FIFO, so the kernel runs it the moment a packet arrives, ahead of every ordinary task and outside
any CFS quota, as the servo's own microcontroller would. Where that is refused the process runs as it is; in-process
emulators (tests, benches) never change their scheduling.
"""

from __future__ import annotations

import os

#: nice value of an emulator process (the default is 0; -10 weighs about 9x in the CFS scheduler)
EMULATOR_NICE = -10
#: SCHED_FIFO priority of a serving thread (1-99; any real-time priority runs ahead of every ordinary task)
SERVER_RT_PRIORITY = 10

#: what `claim_servo_timing` got, in the words an emulator's "serving" line uses
TIMING = {
    "realtime": "real-time servers: replies within the SDK's timeout under load",
    "nice": "nice -10: replies may miss the SDK's timeout on a very loaded host",
    "normal": "normal priority (no permission to raise it): replies may miss the SDK's timeout under load",
}

_realtime_servers = False


def raise_priority(nice: int = EMULATOR_NICE) -> bool:
    """Lower this process's nice value to `nice`; False (and no change) where that is not permitted."""
    try:
        current = os.getpriority(os.PRIO_PROCESS, 0)
        if current > nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        return True
    except (PermissionError, OSError):
        return False


def claim_servo_timing() -> str:
    """Called once by an emulator process before its buses start: nice -10 now, SCHED_FIFO for every bus thread
    started afterwards. Says what it got: "realtime" / "nice" / "normal" (permission refused)."""
    global _realtime_servers
    niced = raise_priority()
    _realtime_servers = _realtime_allowed()
    return "realtime" if _realtime_servers else "nice" if niced else "normal"


def enter_server_thread() -> bool:
    """Called by a bus's serving thread as it starts: SCHED_FIFO for that thread alone when this process claimed
    servo timing (see `claim_servo_timing`); True when the thread now runs real-time."""
    if not _realtime_servers:
        return False
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(SERVER_RT_PRIORITY))  # 0: the calling thread
        return True
    except (PermissionError, OSError, AttributeError):
        return False


def _realtime_allowed() -> bool:
    """Whether this host lets this process make a thread SCHED_FIFO (tried on a throwaway thread)."""
    import threading

    result: list[bool] = []

    def probe() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(SERVER_RT_PRIORITY))
            result.append(True)
        except (PermissionError, OSError, AttributeError):
            result.append(False)

    thread = threading.Thread(target=probe, name="rt-probe")
    thread.start()
    thread.join()
    return bool(result and result[0])


__all__ = [
    "EMULATOR_NICE",
    "SERVER_RT_PRIORITY",
    "TIMING",
    "claim_servo_timing",
    "enter_server_thread",
    "raise_priority",
]
