"""Typed launch entities: what the parser produces and the evaluator walks.

String fields that may hold substitutions are `Parts` (see substitutions.parse); every entity knows
its file, line and tag so that evaluation errors point at the source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from lerobot_ros.launch_runner.substitutions import Parts

Pair = tuple  # (Parts, Parts)


@dataclass
class Entity:
    file: str
    line: int
    tag: str
    if_: Optional[Parts] = None
    unless: Optional[Parts] = None


@dataclass
class Arg(Entity):
    name: str = ""
    default: Optional[Parts] = None
    description: Optional[str] = None
    choices: Optional[list] = None


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
    separator: Optional[Parts] = None


@dataclass
class Log(Entity):
    message: Parts = ()
    level: Optional[Parts] = None


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
    type: Optional[str] = None
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

    output: Optional[Parts] = None
    respawn: Optional[Parts] = None
    respawn_delay: float = 0.0
    respawn_max_retries: int = -1
    sigterm_timeout: float = 5.0
    sigkill_timeout: float = 5.0
    cwd: Optional[Parts] = None
    launch_prefix: Optional[Parts] = None
    env: list = field(default_factory=list)  # [(name Parts, value Parts)]
    on_exit_shutdown: bool = False
    label: Optional[Parts] = None  # exec_name / name of the process in output prefixes


@dataclass
class Node(Process):
    pkg: Optional[Parts] = None
    exec_: Parts = ()
    name: Optional[Parts] = None
    namespace: Optional[Parts] = None
    args: Optional[Parts] = None
    ros_args: Optional[Parts] = None
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
