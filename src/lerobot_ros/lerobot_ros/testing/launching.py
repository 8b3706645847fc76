"""`lerobot-ros launch ...` in a child process with its output collected line by line, and the plans of the shipped launch files evaluated without running them."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import yaml

from lerobot_ros.launch_runner import evaluate_file
from lerobot_ros.ros.runtime import wait_until

#: the shipped launch files as installed (scripts/setup.sh links share/lerobot_ros/launch to the checkout)
LAUNCH = Path(sys.prefix) / "share" / "lerobot_ros" / "launch"


class Launch:
    """`lerobot-ros launch ...` in a child process, its output collected line by line."""

    def __init__(self, args: list[str], env: dict):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lerobot_ros.cli.main", "launch", *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None  # started with stdout=PIPE
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def wait_line(self, pattern: str, timeout: float = 30.0) -> None:
        wait_until(
            lambda: any(re.search(pattern, line) for line in self.lines),
            timeout,
            what=f"a line matching {pattern!r}; output so far:\n{self.text}",
        )

    def pids(self) -> dict[str, int]:
        return {
            m.group(1): int(m.group(2))
            for line in self.lines
            if (m := re.match(r"\[launch\] (\S+) started \(pid (\d+)\)", line))
        }

    def stop(self, timeout: float = 60.0) -> int:
        """Ctrl-C (the runner stops its nodes), then `finish`."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        return self.finish(timeout)

    def finish(self, timeout: float = 60.0) -> int:
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout=5)
        return code


def plan(name: str, **args):
    return evaluate_file(
        str(LAUNCH / f"{name}.launch.yaml"), {k: str(v) for k, v in args.items()}, environ=dict(os.environ)
    )


def labels(p) -> list[str]:
    return [proc.label for proc in p.processes]


def params(proc) -> dict:
    """The node's parameters, from the parameter file the runner wrote for it."""
    path = proc.cmd[proc.cmd.index("--params-file") + 1]
    data = yaml.safe_load(Path(path).read_text())
    (only,) = data.values()
    return only["ros__parameters"]


def by_label(p, label):
    return next(proc for proc in p.processes if proc.label == label)
