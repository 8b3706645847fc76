"""Walk parsed entities in order with a launch context and produce the processes to start.

Semantics follow launch / launch_ros: entities run in file order; `arg` sets its default only when the
configuration is unset; `include` sets its `arg`s as configurations (not scoped, as upstream) and
continues with the included file's entities; `group` is scoped by default (configurations,
environment and the pushed ROS namespace are restored after it); a node's namespace is prefixed by
the pushed `ros_namespace` unless absolute; `param` name/value lists go to a temporary params file
keyed by the node's full name (or `/**`), as launch_ros writes them.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass, field
from typing import NoReturn

from lerobot_ros.launch_runner import ament
from lerobot_ros.launch_runner import entities as E
from lerobot_ros.launch_runner import substitutions as S
from lerobot_ros.launch_runner.cmdline import split_cmdline
from lerobot_ros.launch_runner.errors import LaunchError
from lerobot_ros.launch_runner.params import ParamsMixin
from lerobot_ros.launch_runner.parser import parse_file

MAX_INCLUDE_DEPTH = 32
_TOKEN = r"[A-Za-z_][A-Za-z0-9_]*"
_NODE_NAME = re.compile(rf"^{_TOKEN}$")
_NAMESPACE = re.compile(rf"^/(?:{_TOKEN}(?:/{_TOKEN})*)?$")
OUTPUTS = ("screen", "log", "both", "own_log")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


@dataclass
class ProcessSpec:
    """One process to start: everything the runner needs, fully substituted."""

    label: str
    cmd: list
    env: dict
    cwd: str | None = None
    respawn: bool = False
    respawn_delay: float = 0.0
    respawn_max_retries: int = -1
    sigterm_timeout: float = 5.0
    sigkill_timeout: float = 5.0
    on_exit_shutdown: bool = False
    output: str = "screen"
    node_name: str | None = None
    namespace: str | None = None
    source: str = ""
    package: str | None = None  # a node's pkg
    executable: str | None = None  # a node's exec (cmd holds its resolved path)


@dataclass
class DeclaredArg:
    name: str
    default: str | None
    description: str | None
    choices: list | None
    file: str


@dataclass
class Plan:
    """The result of evaluating a launch file: processes in start order, plus what was declared."""

    processes: list = field(default_factory=list)
    declared: list = field(default_factory=list)
    messages: list = field(default_factory=list)  # `log` entities, in order: (level, text)
    warnings: list = field(default_factory=list)  # skipped optional nodes, duplicate node names ...
    configs: dict = field(default_factory=dict)
    temp_files: list = field(default_factory=list)
    missing: list = field(default_factory=list)  # with collect_missing: (source, package, message) of skipped nodes

    def cleanup(self) -> None:
        for path in self.temp_files:
            try:
                os.remove(path)
            except OSError:
                pass


@dataclass
class _Scope:
    configs: dict
    environ: dict
    file: str
    anon_names: dict


def prefix_namespace(base: str | None, ns: str | None) -> str | None:
    if base is None:
        return ns
    if ns is None:
        return base
    if ns.startswith("/"):
        return ns
    return base.rstrip("/") + "/" + ns


def make_absolute(ns: str | None) -> str | None:
    if ns is None:
        return None
    return ns if ns.startswith("/") else "/" + ns


class Evaluator(ParamsMixin):
    """Visits entities in order, holding the launch configurations and environment (see module doc)."""

    def __init__(self, launch_args: dict | None = None, environ: dict | None = None, collect_missing: bool = False):
        self.collect_missing = collect_missing  # --check: note a node whose package/executable is missing, go on
        self.initial_environ = dict(os.environ if environ is None else environ)
        self.configs: dict = dict(launch_args or {})
        self.environ: dict = dict(self.initial_environ)
        self.anon_names: dict = {}
        self.plan = Plan()
        self._labels: dict = {}
        self._full_names: set = set()
        self._depth = 0

    # -- helpers ---------------------------------------------------------------------------------
    def scope(self, file: str) -> _Scope:
        return _Scope(self.configs, self.environ, file, self.anon_names)

    def text(self, parts, ent: E.Entity, what: str) -> str:
        try:
            return S.evaluate(parts, self.scope(ent.file))
        except S.SubstitutionError as exc:
            raise LaunchError(f"{what}: {exc}", ent.file, ent.line, ent.tag) from None

    def fail(self, message: str, ent: E.Entity, line: int | None = None) -> NoReturn:
        raise LaunchError(message, ent.file, line or ent.line, ent.tag)

    def condition_holds(self, ent: E.Entity) -> bool:
        for key, parts, want in (("if", ent.if_, True), ("unless", ent.unless, False)):
            if parts is not None:
                value = self.text(parts, ent, f"'{key}'")
                try:
                    if S.to_bool(value, f"'{key}' condition") != want:
                        return False
                except S.SubstitutionError as exc:
                    self.fail(str(exc), ent)
        return True

    # -- walking ---------------------------------------------------------------------------------
    def run_file(self, path: str) -> Plan:
        launch_file = parse_file(path)
        self.visit_all(launch_file.entities)
        self.plan.configs = dict(self.configs)
        return self.plan

    def visit_all(self, entities: list) -> None:
        for ent in entities:
            if self.condition_holds(ent):
                getattr(self, "visit_" + type(ent).__name__.lower())(ent)

    def visit_arg(self, ent: E.Arg) -> None:
        default = None if ent.default is None else self.text(ent.default, ent, f"default of argument '{ent.name}'")
        self.plan.declared.append(DeclaredArg(ent.name, default, ent.description, ent.choices, ent.file))
        if ent.name not in self.configs:
            if default is None:
                self.fail(
                    f"required argument '{ent.name}' was not given (pass {ent.name}:=VALUE)"
                    + (f"; {ent.description}" if ent.description else ""),
                    ent,
                )
            self.configs[ent.name] = default
        if ent.choices is not None and self.configs[ent.name] not in ent.choices:
            self.fail(
                f"argument '{ent.name}' is '{self.configs[ent.name]}', valid choices are: {', '.join(ent.choices)}", ent
            )

    def visit_let(self, ent: E.Let) -> None:
        name = self.text(ent.name, ent, "let name")
        self.configs[name] = self.text(ent.value, ent, f"value of '{name}'")

    def visit_setenv(self, ent: E.SetEnv) -> None:
        name = self.text(ent.name, ent, "set_env name")
        self.environ[name] = self.text(ent.value, ent, f"value of environment variable '{name}'")

    def visit_unsetenv(self, ent: E.UnsetEnv) -> None:
        self.environ.pop(self.text(ent.name, ent, "unset_env name"), None)

    def visit_pushnamespace(self, ent: E.PushNamespace) -> None:
        pushed = self.text(ent.namespace, ent, "namespace")
        namespace = make_absolute(prefix_namespace(self.configs.get("ros_namespace"), pushed)) or "/"
        if not _NAMESPACE.match(namespace.rstrip("/") or "/"):
            self.fail(
                f"invalid namespace '{namespace}' (tokens of letters, digits and '_', not starting with a digit)", ent
            )
        self.configs["ros_namespace"] = namespace.rstrip("/") or "/"

    def visit_log(self, ent: E.Log) -> None:
        level = "INFO" if ent.level is None else self.text(ent.level, ent, "log level").upper()
        if level not in LOG_LEVELS:
            self.fail(f"log level must be one of {', '.join(LOG_LEVELS)}, got '{level}'", ent)
        self.plan.messages.append((level, self.text(ent.message, ent, "log message")))

    def visit_appendenv(self, ent: E.AppendEnv) -> None:
        name = self.text(ent.name, ent, "append_env name")
        value = self.text(ent.value, ent, f"value of environment variable '{name}'")
        sep = self.text(ent.separator, ent, "separator") if ent.separator is not None else os.pathsep
        current = self.environ.get(name, "")
        if current:
            value = value + sep + current if ent.prepend else current + sep + value
        self.environ[name] = value

    def visit_group(self, ent: E.Group) -> None:
        if not ent.scoped:
            for name, value in ent.keep:
                self.configs[self.text(name, ent, "keep name")] = self.text(value, ent, "keep value")
            self.visit_all(ent.children)
            return
        saved_configs, saved_env = dict(self.configs), dict(self.environ)
        kept = {self.text(n, ent, "keep name"): self.text(v, ent, "keep value") for n, v in ent.keep}
        if not ent.forwarding:
            self.configs.clear()
            self.environ.clear()
            self.environ.update(self.initial_environ)
        self.configs.update(kept)
        try:
            self.visit_all(ent.children)
        finally:
            self.configs.clear()
            self.configs.update(saved_configs)
            self.environ.clear()
            self.environ.update(saved_env)

    def visit_include(self, ent: E.Include) -> None:
        path = self.text(ent.file_, ent, "include file")
        if not os.path.isabs(path) and not os.path.exists(path):
            path = os.path.join(os.path.dirname(os.path.abspath(ent.file)), path)
        if not os.path.isfile(path):
            self.fail(f"included launch file not found: {path}", ent)
        if not path.endswith((".yaml", ".yml")):
            self.fail(
                f"only YAML launch files can be included by this runner, not {os.path.basename(path)} "
                "(use `ros2 launch` for Python/XML launch files)",
                ent,
            )
        values = [(self.text(n, ent, "include arg name"), self.text(v, ent, "include arg value")) for n, v in ent.args]
        self.configs.update(values)
        if self._depth >= MAX_INCLUDE_DEPTH:
            self.fail(f"includes nested deeper than {MAX_INCLUDE_DEPTH} (an include cycle?)", ent)
        self._depth += 1
        try:
            self.visit_all(parse_file(os.path.abspath(path)).entities)
        finally:
            self._depth -= 1

    # -- processes -------------------------------------------------------------------------------
    def cmdline(self, parts, ent: E.Entity, what: str) -> list[str]:
        try:
            return split_cmdline(parts, lambda sub: self.text((sub,), ent, what))
        except ValueError as exc:
            self.fail(f"{what}: {exc}", ent)

    def process_fields(self, ent: E.Process, env: dict) -> dict:
        output = "screen" if ent.output is None else self.text(ent.output, ent, "output")
        if output not in OUTPUTS:
            self.fail(f"output must be one of {', '.join(OUTPUTS)}, got '{output}'", ent)
        respawn = False
        if ent.respawn is not None:
            try:
                respawn = S.to_bool(self.text(ent.respawn, ent, "respawn"), "respawn")
            except S.SubstitutionError as exc:
                self.fail(str(exc), ent)
        cwd = None if ent.cwd is None else self.text(ent.cwd, ent, "cwd")
        for name, value in ent.env:
            env[self.text(name, ent, "env name")] = self.text(value, ent, "env value")
        env.setdefault("PYTHONUNBUFFERED", "1")
        return dict(
            env=env,
            cwd=cwd,
            respawn=respawn,
            respawn_delay=ent.respawn_delay,
            respawn_max_retries=ent.respawn_max_retries,
            sigterm_timeout=ent.sigterm_timeout,
            sigkill_timeout=ent.sigkill_timeout,
            on_exit_shutdown=ent.on_exit_shutdown,
            output=output,
            source=f"{ent.file}:{ent.line}",
        )

    def unique_label(self, label: str) -> str:
        n = self._labels.get(label, 0) + 1
        self._labels[label] = n
        return label if n == 1 else f"{label}-{n}"

    def visit_executable(self, ent: E.Executable) -> None:
        prefix = [] if ent.launch_prefix is None else self.cmdline(ent.launch_prefix, ent, "launch-prefix")
        if ent.shell:  # the shell gets the substituted text as written (it expands $VARS, pipes ...)
            cmd = ["/bin/sh", "-c", " ".join([shlex.join(prefix), self.text(ent.cmd, ent, "cmd")]).strip()]
        else:
            cmd = prefix + self.cmdline(ent.cmd, ent, "cmd")
        if not cmd or cmd[-1] == "":
            self.fail("'cmd' is empty", ent)
        label = self.text(ent.label, ent, "name") if ent.label is not None else os.path.basename(cmd[0])
        fields = self.process_fields(ent, dict(self.environ))
        self.plan.processes.append(ProcessSpec(label=self.unique_label(label), cmd=cmd, **fields))

    def visit_node(self, ent: E.Node) -> None:
        env = dict(self.environ)
        executable = self.text(ent.exec_, ent, "exec")
        pkg = None
        if ent.pkg is not None:
            pkg = self.text(ent.pkg, ent, "pkg")
            try:  # as in ros2 launch, a missing package or executable ends the whole launch
                path = ament.find_executable(pkg, executable, env)
            except LookupError as exc:
                if not self.collect_missing:
                    self.fail(str(exc), ent)
                self.plan.missing.append((f"{ent.file}:{ent.line}", pkg, str(exc)))
                return
        else:
            path = shutil.which(executable, path=env.get("PATH")) or executable
        name = None
        if ent.name is not None:
            name = self.text(ent.name, ent, "name").lstrip("/")
            if not _NODE_NAME.match(name):
                self.fail(f"invalid node name '{name}' (letters, digits and '_', not starting with a digit)", ent)
        namespace = None if ent.namespace is None else self.text(ent.namespace, ent, "namespace")
        namespace = make_absolute(prefix_namespace(self.configs.get("ros_namespace"), namespace))
        if namespace is not None:
            namespace = namespace.rstrip("/") or "/"
            if not _NAMESPACE.match(namespace):
                self.fail(
                    f"invalid namespace '{namespace}' (tokens of letters, digits and '_', not starting with a digit)",
                    ent,
                )
        cmd = [] if ent.launch_prefix is None else self.cmdline(ent.launch_prefix, ent, "launch-prefix")
        cmd.append(path)
        if ent.args is not None:
            cmd += self.cmdline(ent.args, ent, "args")
        if ent.ros_args is not None:
            cmd += ["--ros-args", *self.cmdline(ent.ros_args, ent, "ros_args")]
        cmd.append("--ros-args")
        if name is not None:
            cmd += ["-r", f"__node:={name}"]
        if namespace is not None:
            cmd += ["-r", f"__ns:={namespace}"]
        full_name = None
        if name is not None and namespace is not None:
            full_name = namespace.rstrip("/") + "/" + name
        if name is not None:
            fq = (namespace or "").rstrip("/") + "/" + name
            if fq in self._full_names:
                self.plan.warnings.append(f"{ent.file}:{ent.line}: there are now at least 2 nodes named {fq}")
            self._full_names.add(fq)
        cmd += self.param_arguments(ent, full_name or "/**")
        for src, dst in ent.remaps:
            cmd += ["-r", f"{self.text(src, ent, 'remap from')}:={self.text(dst, ent, 'remap to')}"]
        if ent.label is not None:
            label = self.text(ent.label, ent, "exec_name")
        else:
            label = name or os.path.basename(executable)
        fields = self.process_fields(ent, env)
        self.plan.processes.append(
            ProcessSpec(
                label=self.unique_label(label),
                cmd=cmd,
                node_name=name,
                namespace=namespace,
                package=pkg,
                executable=executable,
                **fields,
            )
        )


def evaluate_file(
    path: str, launch_args: dict | None = None, environ: dict | None = None, collect_missing: bool = False
) -> Plan:
    """Parse and evaluate `path` with `name:=value` arguments; returns the Plan. Raises LaunchError
    (with `collect_missing`, nodes of missing packages/executables go to `Plan.missing` instead)."""
    return Evaluator(launch_args, environ, collect_missing).run_file(path)
