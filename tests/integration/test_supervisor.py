"""launch_runner.supervisor.ChildProcess with real child processes (no ROS): the order of the stop signals,
the escalation timeouts, exit statuses, output, time limits, Ctrl-C in the parent, and that nothing is left
in the child's process group afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lerobot_ros.processes.supervisor import INTERRUPTED, KILLED, RUNNING, ChildProcess
from lerobot_ros.ros.runtime import wait_until
from lerobot_ros.testing.process_groups import group_gone, pid_alive

#: a child that notes the stop signals it gets (name and CLOCK_MONOTONIC time) in a file. mode "stubborn"
#: ignores them, "polite" exits 0 on the first, "exit" returns at once; "grandchild" also starts a `sleep 60`.
CHILD = textwrap.dedent("""\
    import signal, subprocess, sys, time
    record, mode = sys.argv[1], sys.argv[2]
    def note(text):
        with open(record, "a") as f:
            f.write(text + "\\n")
    def on(sig, _frame):
        note(f"{signal.Signals(sig).name} {time.monotonic():.3f}")
        if mode == "polite":
            sys.exit(0)
    signal.signal(signal.SIGINT, on)
    signal.signal(signal.SIGTERM, on)
    if "grandchild" in sys.argv:
        note(f"grandchild {subprocess.Popen(['sleep', '60']).pid}")
    note("ready")
    while mode != "exit":
        time.sleep(0.02)
    """)


def all_gone(pgid: int, *pids: int) -> None:
    """SIGKILL was sent to the group: its processes die as soon as the kernel gets to them."""
    wait_until(lambda: group_gone(pgid) and not any(pid_alive(p) for p in pids), 10, what=f"process group {pgid} gone")


class Child:
    """A CHILD run with its record file."""

    def __init__(self, tmp_path, mode: str, *extra: str, name: str = "child", **options):
        self.record = tmp_path / f"{name}.txt"
        self.process = ChildProcess(
            [sys.executable, "-c", CHILD, str(self.record), mode, *extra], label=name, **options
        )

    def lines(self) -> list[str]:
        return self.record.read_text().splitlines() if self.record.exists() else []

    def start_ready(self) -> ChildProcess:
        self.process.start()
        wait_until(lambda: "ready" in self.lines(), 30, what=f"{self.process.label} ready")
        return self.process

    def received(self) -> list[tuple[str, float]]:
        return [(name, float(t)) for name, t in (ln.split() for ln in self.lines() if ln.startswith("SIG"))]

    def grandchild(self) -> int:
        return next(int(ln.split()[1]) for ln in self.lines() if ln.startswith("grandchild"))


def test_stop_escalates_sigint_sigterm_sigkill_each_after_its_timeout(tmp_path):
    # sigkill_timeout leaves the child time to note SIGTERM on a busy machine (the test checks lower bounds only)
    child = Child(tmp_path, "stubborn", "grandchild", sigterm_timeout=0.4, sigkill_timeout=3.0)
    process = child.start_ready()
    pgid, grandchild = process.pid, child.grandchild()
    assert process.stop() == -signal.SIGKILL
    assert process.signals_sent == [signal.SIGINT, signal.SIGTERM, signal.SIGKILL] and process.stop_step == KILLED
    (first, t_int), (second, t_term) = child.received()
    assert (first, second) == ("SIGINT", "SIGTERM")
    assert t_term - t_int >= 0.4 - 0.05  # SIGTERM not before sigterm_timeout (a lower bound only: no speed assert)
    assert not process.stopped_cleanly
    all_gone(pgid, grandchild)  # the whole group went, the grandchild too


def test_a_child_that_stops_on_sigint_gets_nothing_more(tmp_path):
    child = Child(tmp_path, "polite", sigterm_timeout=30.0)
    process = child.start_ready()
    assert process.stop() == 0
    assert process.signals_sent == [signal.SIGINT] and process.stopped_cleanly
    assert [name for name, _ in child.received()] == ["SIGINT"]
    all_gone(process.pid)
    assert process.finished and process.stop() == 0 and process.signals_sent == [signal.SIGINT]  # again: nothing


def test_interrupt_all_then_stop_each_sends_sigint_once_to_each(tmp_path):
    children = [Child(tmp_path, "polite", name=f"c{i}", sigterm_timeout=30.0) for i in range(3)]
    processes = [c.start_ready() for c in children]
    for p in processes:
        p.interrupt()
        p.interrupt()
        assert p.stop_step == INTERRUPTED
    assert [p.stop() for p in processes] == [0, 0, 0]
    assert all([name for name, _ in c.received()] == ["SIGINT"] for c in children)
    assert all(p.signals_sent == [signal.SIGINT] for p in processes)


def test_advance_stop_waits_for_each_deadline_unless_forced(tmp_path):
    process = Child(tmp_path, "stubborn", sigterm_timeout=60.0, sigkill_timeout=60.0).start_ready()
    now = time.monotonic()
    assert process.stop_step == RUNNING
    assert process.advance_stop(now) == signal.SIGINT
    assert process.advance_stop(now + 59.0) is None  # deadline not reached
    assert process.advance_stop(now + 61.0) == signal.SIGTERM  # reached
    assert process.advance_stop(now + 62.0) is None
    assert process.advance_stop(now + 62.0, force=True) == signal.SIGKILL  # a second Ctrl-C skips ahead
    assert process.advance_stop(force=True) is None  # nothing after SIGKILL
    assert process.wait(30) == -signal.SIGKILL and process.finish() == -signal.SIGKILL


def test_exit_statuses_are_reported(tmp_path):
    assert ChildProcess(["sh", "-c", "exit 3"]).run(30) == 3
    assert ChildProcess(["sh", "-c", "kill -TERM $$"]).run(30) == -signal.SIGTERM
    quiet = ChildProcess(["true"])
    assert quiet.poll() is None and quiet.stop() is None  # never started: nothing to report
    assert quiet.run(30) == 0 and quiet.stopped_cleanly and quiet.signals_sent == []


def test_what_an_exited_child_left_in_its_group_is_killed(tmp_path):
    child = Child(tmp_path, "exit", "grandchild")
    assert child.process.run(30) == 0
    all_gone(child.process.pid, child.grandchild())


def test_output_reaches_the_callback_in_order_before_the_exit_is_reported():
    lines = []
    script = "import sys\nfor i in range(300): print(f'line {i}')\nprint('to stderr', file=sys.stderr)\nsys.stdout.write('last')"
    process = ChildProcess([sys.executable, "-c", script], on_line=lines.append)
    assert process.run(30) == 0
    assert lines[:300] == [f"line {i}" for i in range(300)] and sorted(lines[300:]) == ["last", "to stderr"]


def test_the_started_callback_comes_before_the_childs_first_line():
    """A launch prints "<label> started (pid N)" from this callback: a child that prints at once must not beat it."""
    for _ in range(10):
        events = []
        process = ChildProcess(["sh", "-c", "echo up"], on_line=lambda line: events.append(("line", line)))
        process.start(on_started=lambda pid: events.append(("started", pid)))
        assert process.wait(30) == 0
        process.finish()
        assert events == [("started", process.pid), ("line", "up")]


def test_log_file_gets_both_streams_and_its_folder_is_made(tmp_path):
    log = tmp_path / "logs" / "deep" / "child.log"
    assert ChildProcess(["sh", "-c", "echo out; echo err >&2"], log=log).run(30) == 0
    assert log.read_text().splitlines() == ["out", "err"]
    with pytest.raises(ValueError, match="not both"):
        ChildProcess(["true"], log=log, on_line=print)


def test_past_its_time_limit_a_child_is_killed_and_the_caller_told(tmp_path):
    child = Child(tmp_path, "stubborn", "grandchild")
    child.start_ready()
    with pytest.raises(subprocess.TimeoutExpired):
        child.process.run(timeout=0.2)
    assert child.process.poll() == -signal.SIGKILL and child.process.signals_sent == [signal.SIGKILL]
    assert child.received() == []  # no SIGINT first: a step past its limit is not asked to stop
    all_gone(child.process.pid, child.grandchild())


def test_ctrl_c_in_the_parent_stops_the_child_before_it_propagates(tmp_path):
    """The demo's situation: the parent waits in run(), the terminal's Ctrl-C reaches only the parent (the
    child has its own session); the parent stops the child (SIGINT first) and then ends with KeyboardInterrupt."""
    record = tmp_path / "child.txt"
    parent_script = textwrap.dedent(f"""\
        import sys
        from lerobot_ros.processes.supervisor import ChildProcess
        child = ChildProcess([sys.executable, "-c", {CHILD!r}, {str(record)!r}, "polite"], sigterm_timeout=30.0)
        child.start()
        print(child.pid, flush=True)
        try:
            child.run()
        except KeyboardInterrupt:
            print("interrupted", child.returncode, flush=True)
            raise
        """)
    parent = subprocess.Popen(
        [sys.executable, "-c", parent_script], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        child_pid = int(parent.stdout.readline())
        wait_until(lambda: record.exists() and "ready" in record.read_text(), 30, what="the child ready")
        os.kill(parent.pid, signal.SIGINT)
        out, _ = parent.communicate(timeout=60)
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
            parent.wait()
    assert out.split() == ["interrupted", "0"] and parent.returncode != 0
    assert record.read_text().split()[1] == "SIGINT"
    all_gone(child_pid)


def test_a_command_that_cannot_start_raises_oserror_and_cannot_be_started_twice(tmp_path):
    missing = ChildProcess([str(tmp_path / "no_such_program")], log=tmp_path / "x.log")
    with pytest.raises(FileNotFoundError):
        missing.start()
    assert missing.poll() is None and not missing.alive()
    started = ChildProcess(["true"]).start()
    with pytest.raises(RuntimeError, match="started already"):
        started.start()
    assert started.run(30) == 0


def test_a_child_marked_die_with_parent_goes_when_its_parent_is_killed(tmp_path):
    """A lerobot-eval worker killed outright must not leave its bridge behind (SIGKILL runs no clean-up)."""
    script = textwrap.dedent(
        """
        import sys, time
        from lerobot_ros.processes.supervisor import ChildProcess
        child = ChildProcess(["sleep", "60"], log=sys.argv[1], die_with_parent=True).start()
        print(child.pid, flush=True)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path / "child.log")], stdout=subprocess.PIPE, text=True
    )
    child_pid = int(parent.stdout.readline())
    assert pid_alive(child_pid)
    # setpriv sets the death signal, then execs the command: once the child is `sleep`, it is set
    wait_until(lambda: Path(f"/proc/{child_pid}/comm").read_text().strip() == "sleep", 10, what="setpriv's exec")
    parent.kill()
    parent.wait(timeout=10)
    wait_until(lambda: not pid_alive(child_pid), 10, what="the orphaned child to get its SIGTERM")
