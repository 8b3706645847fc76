"""Every node's parameter table, generated from its declarations (the config dataclass each node declares, from the library layer that owns it).

`python -m lerobot_ros.nodes.parameter_tables > config/NODE_PARAMETERS.md` regenerates the shipped tables;
tests/integration/test_node_parameters.py fails when they are stale, so the doc cannot drift from the code.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Any, cast

import lerobot_ros.nodes
from lerobot_ros.configs import markdown_table
from lerobot_ros.ros.parameters import BUILTIN_DESCRIPTIONS


def process_params() -> dict[str, dict[str, type]]:
    """Node module name -> {node name: params dataclass} for the executables that run several nodes in one
    process (their module's NODES_IN_PROCESS)."""
    out = {}
    for info in sorted(pkgutil.iter_modules(lerobot_ros.nodes.__path__), key=lambda i: i.name):
        if info.name != "parameter_tables":
            nodes = getattr(importlib.import_module(f"lerobot_ros.nodes.{info.name}"), "NODES_IN_PROCESS", None)
            if nodes:
                out[info.name] = dict(nodes)
    return out


def node_params() -> dict[str, type]:
    """Node module name -> its params dataclass, for every one-node module on the parameter layer."""
    out = {}
    several = process_params()
    for info in sorted(pkgutil.iter_modules(lerobot_ros.nodes.__path__), key=lambda i: i.name):
        if info.name == "parameter_tables" or info.name in several:
            continue
        module = importlib.import_module(f"lerobot_ros.nodes.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__ and "params_class" in vars(value):
                out[info.name] = cast(Any, value).params_class  # a node class (checked just above)
                break
    return out


def markdown() -> str:
    parts = [
        "# Node parameters",
        "",
        "Generated from the declarations (`python -m lerobot_ros.nodes.parameter_tables > config/NODE_PARAMETERS.md`);",
        "a running node shows the same with `ros2 param describe <node> <name>`. Reconfigurable parameters take",
        "effect when set at run time (`ros2 param set`); setting a read-only one is refused with the reason.",
        "Integers are accepted for floating-point parameters (`fps:=30`) and numbers for strings (`source:=0`).",
        "Every node also has " + ", ".join(f"`{n}` ({d})" for n, d in BUILTIN_DESCRIPTIONS.items()) + ".",
    ]
    for module, cls in node_params().items():
        parts += ["", f"## {module}", "", markdown_table(cls)]
    for module, nodes in process_params().items():
        parts += ["", f"## {module}", "", f"One process, {len(nodes)} nodes; each takes its own parameters."]
        for node, cls in nodes.items():
            parts += ["", f"### node `{node}`", "", markdown_table(cls)]
    return "\n".join(parts) + "\n"


def main() -> None:
    sys.stdout.write(markdown())


if __name__ == "__main__":
    main()
