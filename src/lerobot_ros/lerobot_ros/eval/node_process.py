"""The node processes an evaluation starts: one sim bridge and one policy source per namespace.

Each runs as `python -m lerobot_ros.nodes.<node> --ros-args ...` (what the launch runner does for a
node), logs to its own file, and is stopped with SIGINT, then SIGTERM/SIGKILL if it lingers (the
project's `lerobot_ros.processes.ChildProcess`).
Several bridges would all publish `/clock`: each namespace gets its own (`/<ns>/clock`), and its
policy node listens there.
"""

from __future__ import annotations

import copy
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from lerobot_ros.processes.supervisor import ChildProcess


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
        args = [
            sys.executable,
            "-m",
            self.module,
            "--ros-args",
            "-r",
            f"__node:={self.name}",
            "-r",
            f"__ns:={self.namespace}",
        ]
        for k, v in self.params.items():
            args += ros_param(k, v)
        for a, b in self.remaps.items():
            args += ["-r", f"{a}:={b}"]
        return args


class NodeProcess(ChildProcess):
    """A started node with its log file (a `ChildProcess`: its own process group, SIGINT, then SIGTERM
    after `timeout` and SIGKILL 3 s later)."""

    log_path: Path  # always given (ChildProcess's is optional)

    def __init__(
        self,
        spec: NodeSpec,
        log_path: Path,
        env: dict | None = None,
        timeout: float = 10.0,
        die_with_parent: bool = False,
    ):
        self.spec = spec
        super().__init__(
            spec.argv(),
            label=f"{spec.namespace.rstrip('/')}/{spec.name}",
            env=env or dict(os.environ),
            log=log_path,
            stdin=None,
            sigterm_timeout=timeout,
            sigkill_timeout=3.0,
            die_with_parent=die_with_parent,
        )
        self.start()

    def tail(self, lines: int = 5) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])

    def failure(self) -> str | None:
        """None while running; otherwise a one-line reason taken from the end of its log."""
        code = self.poll()
        if code is None:
            return None
        last = self.tail(20).splitlines() or ["no output"]
        reason = next((ln for ln in reversed(last) if ln.strip() and not ln.startswith(" ")), last[-1])
        return f"{self.label} exited with code {code}: {reason.strip()} (log: {self.log_path})"


def namespaced_contract(
    source: dict, namespace: str, image_shape: tuple[int, int] | None, base_ns: str = "/sim"
) -> dict:
    """A copy of a sim contract whose topics live under `namespace` instead of `base_ns`, every
    observation reliable (lockstep waits on each message: a dropped one would stall the episode), and
    image shapes set to the bridge's render size."""
    data = copy.deepcopy(source)  # keeps the feature order: the policy node subscribes in that order
    ns = "/" + namespace.strip("/")
    base = "/" + base_ns.strip("/")

    def move(topic: str) -> str:
        if topic == base or topic.startswith(base + "/"):
            return (ns.rstrip("/") + topic[len(base) :]) or "/"
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
                {**t, "resize": [int(image_shape[0]), int(image_shape[1])]}
                if isinstance(t, dict) and "resize" in t
                else t
                for t in feature.get("transforms") or []
            ]
    return data
