"""The node processes an evaluation starts: one sim bridge and one policy source per namespace.

Each runs as `python -m lerobot_ros.nodes.<node> --ros-args ...` (what the launch runner does for a
node), logs to its own file, and is stopped with SIGINT, then SIGTERM/SIGKILL if it lingers.
Several bridges would all publish `/clock`: each namespace gets its own (`/<ns>/clock`), and its
policy node listens there.
"""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path



def ros_param(name: str, value) -> list[str]:
    """`-p name:=value` with ROS' YAML value syntax (booleans lower case, lists in brackets)."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (list, tuple)):
        text = "[" + ",".join(_scalar(v) for v in value) + "]"
    else:
        text = _scalar(value)
    return ["-p", f"{name}:={text}"]


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value and not any(c in value for c in " ,[]:'\"#") else "'" + value.replace("'", "''") + "'"
    return str(value)


@dataclass
class NodeSpec:
    """One node process: module, namespace, node name, parameters, remappings."""

    module: str
    namespace: str
    name: str
    params: dict = field(default_factory=dict)
    remaps: dict = field(default_factory=dict)

    def argv(self) -> list[str]:
        args = [sys.executable, "-m", self.module, "--ros-args", "-r", f"__node:={self.name}", "-r", f"__ns:={self.namespace}"]
        for k, v in self.params.items():
            args += ros_param(k, v)
        for a, b in self.remaps.items():
            args += ["-r", f"{a}:={b}"]
        return args


class NodeProcess:
    """A started node with its log file."""

    def __init__(self, spec: NodeSpec, log_path: Path, env: dict | None = None):
        self.spec = spec
        self.log_path = Path(log_path)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "wb")
        self._interrupted = False
        self.proc = subprocess.Popen(
            spec.argv(), stdout=self._log, stderr=subprocess.STDOUT, env=env or dict(os.environ), start_new_session=True
        )

    @property
    def label(self) -> str:
        return f"{self.spec.namespace.rstrip('/')}/{self.spec.name}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, lines: int = 5) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])

    def failure(self) -> str | None:
        """None while running; otherwise a one-line reason taken from the end of its log."""
        code = self.proc.poll()
        if code is None:
            return None
        last = (self.tail(20).splitlines() or ["no output"])
        reason = next((ln for ln in reversed(last) if ln.strip() and not ln.startswith(" ")), last[-1])
        return f"{self.label} exited with code {code}: {reason.strip()} (log: {self.log_path})"

    def interrupt(self) -> None:
        """Send SIGINT without waiting (`stop` then waits): several processes shut down in parallel."""
        if self.proc.poll() is None and not self._interrupted:
            self._interrupted = True
            try:
                self.proc.send_signal(signal.SIGINT)
            except ProcessLookupError:
                pass

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc.poll() is None:
            for sig, wait in ((signal.SIGINT, timeout), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
                if sig == signal.SIGINT and self._interrupted:
                    sig = None  # already sent by interrupt(): only wait
                try:
                    if sig is not None:
                        self.proc.send_signal(sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self._log.close()


def namespaced_contract(source: dict, namespace: str, image_shape: tuple[int, int] | None, base_ns: str = "/sim") -> dict:
    """A copy of a sim contract whose topics live under `namespace` instead of `base_ns`, every
    observation reliable (lockstep waits on each message: a dropped one would stall the episode), and
    image shapes set to the bridge's render size."""
    data = copy.deepcopy(source)  # keeps the feature order: the policy node subscribes in that order
    ns = "/" + namespace.strip("/")
    base = "/" + base_ns.strip("/")

    def move(topic: str) -> str:
        if topic == base or topic.startswith(base + "/"):
            return (ns.rstrip("/") + topic[len(base):]) or "/"
        return topic

    for key in ("task", "episode_boundary"):
        if isinstance(data.get(key), dict) and data[key].get("topic"):
            data[key]["topic"] = move(data[key]["topic"])
    for name, feature in data.get("features", {}).items():
        feature["topic"] = move(feature["topic"])
        if name != "action":
            feature["qos"] = "reliable"
        if image_shape is not None and str(feature.get("type", "")).endswith(("/Image", "/CompressedImage")):
            feature["shape"] = [int(image_shape[0]), int(image_shape[1]), 3]
            # a resize to the dataset's size (libero, so101_sim) must now give the policy's size
            feature["transforms"] = [
                {**t, "resize": [int(image_shape[0]), int(image_shape[1])]} if isinstance(t, dict) and "resize" in t else t
                for t in feature.get("transforms") or []
            ]
    return data


def wait_for_exit(procs: list[NodeProcess], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            p.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
