"""One supervisor for every long-lived child process: the launch runner's nodes, eval's bridges and policy
sources, the demo's launch and its steps.

A `ChildProcess` runs in its own session (process group), so a terminal's Ctrl-C reaches only the parent,
which decides what to stop; every signal goes to the whole group, so whatever the child started goes with
it. Output goes to a log file, to a callback line by line (the launch runner prefixes it), or to the
parent's own stdout. Stopping escalates the way `ros2 launch` does: SIGINT, then SIGTERM after
`sigterm_timeout`, then SIGKILL after `sigkill_timeout`; `advance_stop` takes one step (for a parent that
polls many children and may skip ahead on a second Ctrl-C), `stop` blocks until the child is gone. Once
the leader has exited, `finish` kills whatever it left in its group, drains its output and closes the log,
so nothing outlives the supervisor.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

#: exit statuses of a child that stopped because it was asked to (or ended normally)
CLEAN_STOP_CODES = frozenset({0, -signal.SIGINT, -signal.SIGTERM, 128 + signal.SIGINT, 128 + signal.SIGTERM})

#: where a stop has got to
RUNNING, INTERRUPTED, TERMINATED, KILLED = 0, 1, 2, 3
_NEXT_SIGNAL = {RUNNING: signal.SIGINT, INTERRUPTED: signal.SIGTERM, TERMINATED: signal.SIGKILL}


class ChildProcess:
    """One child command in its own process group; `start()` spawns it (OSError when it cannot).

    `log`: file for stdout and stderr together (parents created, truncated); `on_line(text)`: called from a
    reader thread for each output line instead (decoded, line end stripped); neither: the parent's streams.
    `kill_wait`: how long to wait after SIGKILL before giving up on a process the kernel will not reap.
    `die_with_parent`: the child gets SIGTERM when the thread that started it dies, even by SIGKILL (Linux
    `PR_SET_PDEATHSIG`, set by util-linux's `setpriv` in front of the command rather than a `preexec_fn`, which
    is unsafe in a process with threads; without `setpriv` nothing is set; a parent that dies in the moment
    between the fork and setpriv's exec still leaves the child behind); for children of a process someone else
    may kill, like a lerobot-eval worker's bridge.
    """

    def __init__(
        self,
        cmd: Sequence[str],
        *,
        label: str = "",
        env: dict | None = None,
        cwd: str | None = None,
        log: str | os.PathLike | None = None,
        on_line: Callable[[str], None] | None = None,
        stdin=subprocess.DEVNULL,
        sigterm_timeout: float = 10.0,
        sigkill_timeout: float = 3.0,
        kill_wait: float = 5.0,
        die_with_parent: bool = False,
    ):
        if log is not None and on_line is not None:
            raise ValueError("give a log file or an on_line callback, not both")
        self.cmd, self.label = list(cmd), label or os.path.basename(str(cmd[0]))
        self.env, self.cwd, self.stdin = env, cwd, stdin
        self.log_path = Path(log) if log is not None else None
        self.on_line = on_line
        self.sigterm_timeout, self.sigkill_timeout, self.kill_wait = sigterm_timeout, sigkill_timeout, kill_wait
        self.die_with_parent = die_with_parent
        self.proc: subprocess.Popen | None = None
        self.stop_step = RUNNING
        self.step_deadline = 0.0
        self.signals_sent: list[int] = []  # by the stop escalation, in order
        self._log: IO[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._finished = False

    # -- start and state ----------------------------------------------------------------------------
    def start(self, on_started: Callable[[int], None] | None = None) -> ChildProcess:
        """Start the child. `on_started(pid)` runs before any of its output is passed on, so a "started"
        line always comes before the child's own first line."""
        if self.proc is not None:
            raise RuntimeError(f"{self.label} was started already")
        out: int | IO[bytes] | None = None
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            out = self._log = open(self.log_path, "wb")  # noqa: SIM115 - open for the child's lifetime
        elif self.on_line is not None:
            out = subprocess.PIPE
        try:
            self.proc = subprocess.Popen(
                _with_parent_death_signal(self.cmd) if self.die_with_parent else self.cmd,
                env=self.env,
                cwd=self.cwd,
                stdin=self.stdin,
                stdout=out,
                stderr=subprocess.STDOUT if out is not None else None,
                start_new_session=True,
            )
        except OSError:
            if self._log is not None:
                self._log.close()
            raise
        if on_started is not None:
            on_started(self.proc.pid)
        if self.on_line is not None:
            self._reader = threading.Thread(target=self._pump, name=f"{self.label}-output", daemon=True)
            self._reader.start()
        return self

    def _pump(self) -> None:
        # started by `start` with on_line set, after Popen with stdout=PIPE
        assert self.proc is not None and self.proc.stdout is not None and self.on_line is not None
        stream = self.proc.stdout
        for raw in iter(stream.readline, b""):
            self.on_line(raw.decode("utf-8", "replace").rstrip("\r\n"))
        stream.close()

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def poll(self) -> int | None:
        """The exit status once the child has exited (negative: the signal that ended it), else None."""
        return None if self.proc is None else self.proc.poll()

    @property
    def returncode(self) -> int | None:
        return self.poll()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def finished(self) -> bool:
        """`finish` ran: the child is gone, its output drained and its log closed."""
        return self._finished

    @property
    def stopped_cleanly(self) -> bool:
        """Exited with 0 or of the SIGINT/SIGTERM it was sent (a SIGKILL never is clean)."""
        return self.poll() in CLEAN_STOP_CODES and self.stop_step < KILLED

    def wait(self, timeout: float | None = None) -> int | None:
        """The exit status, or None when the child still runs after `timeout` seconds."""
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    # -- signals and stopping -----------------------------------------------------------------------
    def signal(self, sig: int) -> bool:
        """Send `sig` to the child's whole process group; False when nothing is left to receive it."""
        if self.proc is None:
            return False
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def advance_stop(self, now: float | None = None, force: bool = False) -> int | None:
        """One step of SIGINT -> SIGTERM -> SIGKILL: the first call sends SIGINT; later ones send the next
        signal once the step's timeout has passed (or at once with `force`). Returns the signal sent, if any."""
        if not self.alive() or self.stop_step >= KILLED:
            return None
        now = time.monotonic() if now is None else now
        if self.stop_step != RUNNING and not (force or now >= self.step_deadline):
            return None
        sig = _NEXT_SIGNAL[self.stop_step]
        self.stop_step += 1
        self.step_deadline = now + (self.sigterm_timeout if sig == signal.SIGINT else self.sigkill_timeout)
        self.signals_sent.append(sig)
        self.signal(sig)
        return sig

    def interrupt(self) -> None:
        """SIGINT without waiting (then `stop`): several children shut down in parallel. Sent once."""
        if self.stop_step == RUNNING:
            self.advance_stop()

    def stop(self) -> int | None:
        """Stop by escalation (continuing from `interrupt`), then `finish`. The exit status; None when
        the child was never started or did not go even after SIGKILL."""
        if self.proc is None:
            return None
        self.advance_stop()
        while self.alive():
            if self.stop_step >= KILLED:
                self.wait(self.kill_wait)
                break
            if self.wait(max(0.0, self.step_deadline - time.monotonic())) is None:
                self.advance_stop(force=True)
        return self.finish()

    def kill(self) -> int | None:
        """SIGKILL at once (a step that ran past its time limit), then `finish`."""
        if self.alive():
            self.stop_step = KILLED
            self.signals_sent.append(signal.SIGKILL)
            self.signal(signal.SIGKILL)
            self.wait(self.kill_wait)
        return self.finish()

    def finish(self) -> int | None:
        """After the exit: whatever the child left in its group is killed (and so its pipe reaches EOF),
        its output is drained, the log closed. Idempotent; returns the exit status."""
        if self.proc is None:
            return None
        if not self._finished:
            self._finished = True
            self.signal(signal.SIGKILL)
            if self._reader is not None:
                self._reader.join(timeout=10.0)  # every line is handed on before the exit is reported
            if self._log is not None:
                self._log.close()
        return self.poll()

    def run(self, timeout: float | None = None) -> int:
        """Start (unless started), wait for the exit and `finish`; the exit status. Past `timeout` the
        child is killed and subprocess.TimeoutExpired raised; anything raised while waiting (Ctrl-C in
        the parent) stops the child first (SIGINT, escalating) and then propagates."""
        if self.proc is None:
            self.start()
        try:
            code = self.wait(timeout)
        except BaseException:
            try:
                self.stop()
            except BaseException:  # a second Ctrl-C while it stops: no more patience, but no orphan either
                self.kill()
                raise
            raise
        if code is None:
            assert timeout is not None  # a started child's wait(None) blocks until it exits
            self.kill()
            raise subprocess.TimeoutExpired(self.cmd, timeout)
        self.finish()
        return code


__all__ = ["CLEAN_STOP_CODES", "INTERRUPTED", "KILLED", "RUNNING", "TERMINATED", "ChildProcess"]


def _with_parent_death_signal(cmd: list[str]) -> list[str]:
    """`cmd` run through `setpriv --pdeathsig TERM` where util-linux's setpriv exists (it execs `cmd` in place).
    A command that cannot be found is left alone, so that starting it raises OSError here as without setpriv."""
    setpriv = shutil.which("setpriv")
    if not setpriv or not cmd or shutil.which(cmd[0]) is None:
        return cmd
    return [setpriv, "--pdeathsig", "TERM", "--", *cmd]
