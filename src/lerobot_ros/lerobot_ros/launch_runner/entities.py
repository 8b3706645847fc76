"""Typed launch entities: what the parser produces and the evaluator walks.

String fields that may hold substitutions are `Parts` (see substitutions.parse); every entity knows
its file, line and tag so that evaluation errors point at the source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lerobot_ros.launch_runner.substitutions import Parts

Pair = tuple  # (Parts, Parts)


@dataclass
class Entity:
    file: str
    line: int
    tag: str
    if_: Parts | None = None
    unless: Parts | None = None


@dataclass
class Arg(Entity):
    name: str = ""
    default: Parts | None = None
    description: str | None = None
    choices: list | None = None


@dataclass
class Let(Entity):
    name: Parts = ()
    value: Parts = ()


@dataclass
class SetEnv(Entity):
    name: Parts = ()
    value: Parts = ()


@dataclass
class UnsetEnv(Entity):
    name: Parts = ()


@dataclass
class PushNamespace(Entity):
    namespace: Parts = ()


@dataclass
class AppendEnv(Entity):
    name: Parts = ()
    value: Parts = ()
    prepend: bool = False
    separator: Parts | None = None


@dataclass
class Log(Entity):
    message: Parts = ()
    level: Parts | None = None


@dataclass
class Group(Entity):
    children: list = field(default_factory=list)
    scoped: bool = True
    forwarding: bool = True
    keep: list = field(default_factory=list)  # [(name Parts, value Parts)]


@dataclass
class Include(Entity):
    file_: Parts = ()
    args: list = field(default_factory=list)  # [(name Parts, value Parts)]


@dataclass
class ParamValue:
    """`{name, value[, type]}` or `{name, param: [...]}` (nested) inside a node's `param` list."""

    name: Parts
    line: int
    value: Any = None  # str Parts, scalar, or list of those
    type: str | None = None
    children: list = field(default_factory=list)


@dataclass
class ParamFile:
    """`{from: FILE[, allow_substs]}` inside a node's `param` list."""

    path: Parts
    line: int
    allow_substs: bool = False


@dataclass
class Process(Entity):
    """What `node` and `executable` share (launch's ExecuteProcess attributes)."""

    output: Parts | None = None
    respawn: Parts | None = None
    respawn_delay: float = 0.0
    respawn_max_retries: int = -1
    sigterm_timeout: float = 5.0
    sigkill_timeout: float = 5.0
    cwd: Parts | None = None
    launch_prefix: Parts | None = None
    env: list = field(default_factory=list)  # [(name Parts, value Parts)]
    on_exit_shutdown: bool = False
    label: Parts | None = None  # exec_name / name of the process in output prefixes


@dataclass
class Node(Process):
    pkg: Parts | None = None
    exec_: Parts = ()
    name: Parts | None = None
    namespace: Parts | None = None
    args: Parts | None = None
    ros_args: Parts | None = None
    params: list = field(default_factory=list)  # [ParamValue | ParamFile]
    remaps: list = field(default_factory=list)  # [(from Parts, to Parts)]


@dataclass
class Executable(Process):
    cmd: Parts = ()
    shell: bool = False


@dataclass
class LaunchFile:
    path: str
    entities: list
