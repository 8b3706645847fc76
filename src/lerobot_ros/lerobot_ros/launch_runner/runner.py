"""Start the planned processes, prefix their output, respawn them, and stop them all cleanly.

Each process is a `lerobot_ros.processes.ChildProcess` in its own session (process group), so a terminal's Ctrl-C
reaches only the runner, which then stops every child the way launch does: SIGINT, then SIGTERM after
`sigterm_timeout`, then SIGKILL after `sigkill_timeout` (a second Ctrl-C skips ahead a step). Signals go
to the whole process group, so whatever a node started goes too. A runner killed outright (SIGKILL) takes its
children along: each gets SIGTERM when the runner dies (`ChildProcess(die_with_parent=True)`). The exit status
is 0 when every process ended cleanly (or was stopped by the runner), 1 when one failed or could not start.
"""

from __future__ import annotations

import functools
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TextIO

from lerobot_ros.launch_runner.evaluate import ProcessSpec
from lerobot_ros.processes.supervisor import CLEAN_STOP_CODES, KILLED, ChildProcess

POLL_S = 0.05


@dataclass
class _Child:
    spec: ProcessSpec
    process: ChildProcess | None = None  # the current run (a respawn starts a new one)
    respawns: int = 0
    respawn_at: float | None = None
    exit_codes: list = field(default_factory=list)


class Runner:
    def __init__(self, specs: list[ProcessSpec], out: TextIO | None = None):
        self.children = [_Child(s) for s in specs]
        self.out = out or sys.stdout
        self.lock = threading.Lock()
        self.signals = 0
        self.stopping = False
        self.failed: list[str] = []

    # -- output ---------------------------------------------------------------------------------
    def say(self, label: str, text: str) -> None:
        with self.lock:
            try:
                self.out.write(f"[{label}] {text}\n")
                self.out.flush()
            except (BrokenPipeError, ValueError):  # our reader went away (`| head`): keep draining the pipes
                pass

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self, child: _Child) -> bool:
        spec = child.spec
        process = ChildProcess(
            spec.cmd,
            label=spec.label,
            env=spec.env,
            cwd=spec.cwd,
            on_line=functools.partial(self._say_line, spec.label),
            sigterm_timeout=spec.sigterm_timeout,
            sigkill_timeout=spec.sigkill_timeout,
            # a runner killed outright (SIGKILL, OOM) must not leave its nodes running: each gets SIGTERM then
            # (ros2 launch orphans them, ros2/launch#666)
            die_with_parent=True,
        )
        try:
            process.start(on_started=lambda pid: self.say("launch", f"{spec.label} started (pid {pid})"))
        except OSError as exc:
            self.say("launch", f"error: cannot start {spec.label} ({spec.source}): {exc.strerror}: {spec.cmd[0]}")
            self.failed.append(spec.label)
            return False
        child.process, child.respawn_at = process, None
        return True

    def _say_line(self, label: str, line: str) -> None:
        self.say(label, line)

    def _on_signal(self, signum, _frame) -> None:
        self.signals += 1

    def _step_stop(self, child: _Child, force: bool, now: float) -> None:
        """Advance `child` along SIGINT -> SIGTERM -> SIGKILL when its deadline passed (or `force`)."""
        if child.process is None:
            return
        sent = child.process.advance_stop(now, force)
        if sent == signal.SIGTERM:
            self.say("launch", f"{child.spec.label} did not stop on SIGINT, sending SIGTERM")
        elif sent == signal.SIGKILL:
            self.say("launch", f"{child.spec.label} did not stop on SIGTERM, sending SIGKILL")

    def _reap(self, child: _Child, now: float) -> None:
        """Handle an exited child: log, respawn, or start a shutdown."""
        process, spec = child.process, child.spec
        assert process is not None  # only an exited child is reaped
        # Whatever the node left in its process group goes with it; all of its output is printed first.
        code = process.finish()
        child.exit_codes.append(code)
        child.process = None
        if self.stopping:
            if process.stop_step >= KILLED:
                self.say("launch", f"{spec.label} was killed")
            elif code not in CLEAN_STOP_CODES:
                self.say("launch", f"{spec.label} exited with status {code} while stopping")
            return
        self.say("launch", f"{spec.label} exited with status {code}")
        if spec.on_exit_shutdown:
            self.say("launch", f"{spec.label} has on_exit: shutdown; stopping everything")
            if code != 0:
                self.failed.append(spec.label)
            self.stopping = True
            return
        if spec.respawn and (spec.respawn_max_retries < 0 or child.respawns < spec.respawn_max_retries):
            child.respawns += 1
            child.respawn_at = now + spec.respawn_delay
            self.say("launch", f"respawning {spec.label} in {spec.respawn_delay:g} s")
            return
        if code != 0:
            self.failed.append(spec.label)

    def run(self) -> int:
        previous = {}
        in_main = threading.current_thread() is threading.main_thread()
        if in_main:
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                previous[sig] = signal.signal(sig, self._on_signal)
        try:
            return self._loop()
        finally:
            self._kill_all()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _loop(self) -> int:
        for child in self.children:
            if self.signals:
                break
            if not self.start(child):
                self.stopping = True
                break
        handled_signals = 0
        while True:
            now = time.monotonic()
            if self.signals > handled_signals:
                if not self.stopping:
                    self.say("launch", "stopping (signal received)")
                force = self.stopping and handled_signals > 0
                self.stopping = True
                handled_signals = self.signals
                for child in self.children:
                    self._step_stop(child, force, now)
            for child in self.children:
                if child.process is not None and child.process.poll() is not None:
                    self._reap(child, now)
                elif (
                    child.process is None
                    and child.respawn_at is not None
                    and not self.stopping
                    and now >= child.respawn_at
                    and not self.start(child)
                ):
                    self.stopping = True
            if self.stopping:
                for child in self.children:
                    self._step_stop(child, False, now)
            pending = any(
                c.process is not None or (c.respawn_at is not None and not self.stopping) for c in self.children
            )
            if not pending:
                break
            time.sleep(POLL_S)
        if self.failed:
            self.say("launch", f"failed: {', '.join(self.failed)}")
            return 1
        return 0

    def _kill_all(self) -> None:
        """Last resort (an exception in the loop): nothing may outlive the runner."""
        for child in self.children:
            if child.process is not None:
                child.process.kill()


def run_processes(specs: list[ProcessSpec], out: TextIO | None = None) -> int:
    """Run `specs` until they all exit or a signal stops them; returns the exit status."""
    return Runner(specs, out).run()
