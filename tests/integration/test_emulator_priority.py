"""The servo emulators answer like hardware on a loaded host: `lerobot-ros virtual-arm` claims servo timing where it
may (root here): nice -10 for the process and SCHED_FIFO for each bus's serving thread, so LeRobot's SDK gets its
status packets within its ~50 ms timeout beside busy processes. In-process emulators keep theirs unless they ask."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lerobot_ros.hardware.virtual.arms import VirtualArm
from lerobot_ros.hardware.virtual.priority import EMULATOR_NICE, SERVER_RT_PRIORITY

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="raising a priority needs root (or CAP_SYS_NICE)")

SCHED_OTHER, SCHED_FIFO = 0, 1


def _sched(pid: int, tid: int) -> tuple[int, int, int]:
    """(nice, rt_priority, policy) of one thread, from /proc (fields 19, 40 and 41 of its stat)."""
    fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[16]), int(fields[37]), int(fields[38])


def test_virtual_arm_serves_from_real_time_threads_at_the_emulator_nice(tmp_path):
    cli = Path(sys.executable).parent / "lerobot-ros"
    proc = subprocess.Popen(
        [str(cli), "virtual-arm", "so101", "--output_dir", str(tmp_path), "--json", "--duration_s", "30"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())  # serving
        assert info["timing"] == "realtime"
        threads = {int(tid): _sched(proc.pid, int(tid)) for tid in os.listdir(f"/proc/{proc.pid}/task")}
        assert threads[proc.pid] == (EMULATOR_NICE, 0, SCHED_OTHER)  # the main thread only waits
        realtime = [s for s in threads.values() if s[2] != SCHED_OTHER]
        # one serving thread per arm (leader and follower), real-time; no other (the probe thread has ended; threads
        # that imports started, numpy's among them, stay ordinary)
        assert realtime == [(EMULATOR_NICE, SERVER_RT_PRIORITY, SCHED_FIFO)] * 2, threads
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_an_in_process_emulator_keeps_its_scheduling_unless_it_asks(tmp_path):
    """Tests and benches start emulators inside themselves: those turn no thread real-time unless built with
    realtime=True, and then only their own serving thread."""

    def realtime_threads() -> set[int]:
        tids = [int(t) for t in os.listdir(f"/proc/{os.getpid()}/task")]
        return {t for t in tids if _sched(os.getpid(), t)[2] != SCHED_OTHER}

    before, nice = realtime_threads(), os.getpriority(os.PRIO_PROCESS, 0)  # other tests' threads may linger
    with VirtualArm("so101", "follower", port=tmp_path / "port") as arm:
        assert arm.bus.realtime is False
        assert realtime_threads() - before == set()
    with VirtualArm("so101", "leader", port=tmp_path / "rt", realtime=True) as arm:
        assert arm.bus.realtime is True
        assert len(realtime_threads() - before) == 1
    assert os.getpriority(os.PRIO_PROCESS, 0) == nice
