"""`lerobot-ros launch FILE --check`: what would go wrong, or mean something else, under `ros2 launch`.

Three kinds of finding, each one line with what to do:
- constructs whose meaning differs between the runners, or from what a reader expects of launch's
  grammar (read from the raw YAML, with file:line): CONSTRUCTS lists them;
- packages the file needs (node `pkg`, `find-pkg-share`, `find-pkg-prefix`, `exec-in-pkg`) that are not
  installed where a started node needs them: ros2 launch then stops everything;
- processes that would exit at once with these arguments: a missing executable, a node whose required
  parameter is empty (REQUIRED_PARAMETERS), a policy folder that does not exist.
Every package is also listed with where it is installed (not a finding by itself).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import yaml

from lerobot_ros.launch_runner import ament
from lerobot_ros.launch_runner import entities as E
from lerobot_ros.launch_runner import substitutions as S
from lerobot_ros.launch_runner.errors import LaunchError
from lerobot_ros.launch_runner.evaluate import evaluate_file
from lerobot_ros.launch_runner.parser import parse_file
from lerobot_ros.launch_runner.yaml_source import LDict, load_yaml

# The constructs --check reports: where real `ros2 launch` reads a file differently from this runner.
CONSTRUCTS = {
    "empty-quoted-equals": "'' (or \"\") as an argument of $(equals)/$(not-equals): launch compares the text '[]'",
    "nested-quote": "a quote character inside a nested substitution of a quoted argument: a plain character",
    "output": "output: log|both|own_log: ros2 launch writes ~/.ros/log files, lerobot-ros launch prints to the screen",
    "emulate_tty": "emulate_tty: ros2 launch gives the process a pseudo-terminal, lerobot-ros launch a pipe",
    "include-non-yaml": "including a Python or XML launch file: only ros2 launch reads those",
    "parse": "a file or substitution that does not parse (ros2 launch rejects it too)",
    "evaluate": "an error while evaluating with these arguments (ros2 launch stops on it too)",
    "missing-package": "a started node's package is not installed: ros2 launch ends the whole launch",
    "missing-executable": "a started process's executable does not exist: it exits at once",
    "required-parameter": "a node whose required parameter is empty (or names no folder): it exits at once",
    "share-link": "share/PKG/launch (or a folder in it) is a link: ros2 launch PKG FILE does not look inside",
}

# (package, executable) -> {parameter: (must name a folder, hint)}: what the node refuses to start without.
REQUIRED_PARAMETERS = {
    ("lerobot_ros", "policy_node"): {
        "policy.path": (
            True,
            "pass policy.path:=DIR (a LeRobot pretrained_model folder), or leave policy.path empty for no policy",
        )
    },
}


@dataclass
class Finding:
    kind: str  # a key of CONSTRUCTS
    where: str  # file:line, or the file
    message: str  # what is wrong and what to do

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class Report:
    path: str
    findings: list = field(default_factory=list)
    packages: dict = field(default_factory=dict)  # package -> prefix, or None when not installed
    needed_by: dict = field(default_factory=dict)  # package -> [file:line, ...]
    processes: list = field(default_factory=list)  # labels of what would start
    started_packages: set = field(default_factory=set)  # packages of the nodes that would start


def _rel(path: str) -> str:
    return os.path.basename(path)


def _strings(node, line: int, key: str | None = None):
    """(string, line, key) of every string in a raw YAML tree, with the line of its closest key."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, node.line_of(k) if isinstance(node, LDict) else line, k)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v, getattr(v, "line", line), key)
    elif isinstance(node, str):
        yield node, line, key


def _mappings(node):
    """(tag, body) of every entity mapping in a raw launch tree."""
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, dict):
                yield k, v
            yield from _mappings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _mappings(v)


NOT_SUBSTITUTED = {"description"}  # attributes launch does not read as substitutions


def _raw_constructs(path: str, report: Report) -> None:
    tree = load_yaml(path)
    for text, line, key in _strings(tree, getattr(tree, "line", 1)):
        if key in NOT_SUBSTITUTED:
            continue
        where = f"{_rel(path)}:{line}"
        try:
            parts = S.parse(text)
            notes = S.grammar_notes(text)
        except S.SubstitutionError as exc:
            report.findings.append(Finding("parse", where, f"{exc}; fix the substitution"))
            continue
        for note in notes:
            report.findings.append(Finding("nested-quote", where, f"{note}; drop the quotes, or escape them (\\')"))
        for sub in S.walk(parts):
            if sub.name in ("equals", "not-equals") and S.EMPTY_QUOTED in sub.args:
                report.findings.append(
                    Finding(
                        "empty-quoted-equals",
                        where,
                        f"$({sub.name}) gets an empty quoted argument in '{text}': ros2 launch compares the text '[]', "
                        "not ''; test emptiness as $(not-equals 'x$(var NAME)' x)",
                    )
                )
    for tag, body in _mappings(tree):
        if tag not in ("node", "executable"):
            continue
        line = body.line_of("output")
        output = body.get("output")
        if output in ("log", "both", "own_log"):
            report.findings.append(
                Finding(
                    "output",
                    f"{_rel(path)}:{line}",
                    f"output: {output}: ros2 launch writes it to ~/.ros/log, lerobot-ros launch prints it on the screen; "
                    "write output: screen for the same behaviour",
                )
            )
        if "emulate_tty" in body:
            report.findings.append(
                Finding(
                    "emulate_tty",
                    f"{_rel(path)}:{body.line_of('emulate_tty')}",
                    "emulate_tty has no effect under lerobot-ros launch (output always goes through a pipe); "
                    "drop it, or run with ros2 launch",
                )
            )


def _static_walk(path: str, report: Report, seen: set) -> None:
    """Raw constructs and needed packages of `path` and of the includes whose path needs no argument."""
    path = os.path.abspath(path)
    if path in seen:
        return
    seen.add(path)
    _raw_constructs(path, report)
    launch_file = parse_file(path)

    def need(pkg: str, where: str) -> None:
        report.needed_by.setdefault(pkg, [])
        if where not in report.needed_by[pkg]:
            report.needed_by[pkg].append(where)

    def packages_in(parts, where: str) -> None:
        for sub in S.walk(parts or ()):
            if sub.name in ("find-pkg-share", "find-pkg-prefix", "exec-in-pkg"):
                arg = sub.args[-1] if sub.name == "exec-in-pkg" else sub.args[0]
                if not S.has_substitutions(arg) and arg:
                    need(S.evaluate(arg, S.SimpleScope()), where)

    def visit(items):
        for ent in items:
            where = f"{_rel(ent.file)}:{ent.line}"
            for value in vars(ent).values():
                for parts in _all_parts(value):
                    packages_in(parts, where)
            if isinstance(ent, E.Node) and ent.pkg is not None and not S.has_substitutions(ent.pkg):
                need(S.evaluate(ent.pkg, S.SimpleScope()), where)
            if isinstance(ent, E.Group):
                visit(ent.children)
            elif isinstance(ent, E.Include):
                try:
                    included = S.evaluate(ent.file_, S.SimpleScope(configs={}, file=ent.file))
                except S.SubstitutionError:
                    continue  # depends on an argument: evaluated below with the arguments given
                if not included.endswith((".yaml", ".yml")):
                    report.findings.append(
                        Finding(
                            "include-non-yaml",
                            where,
                            f"includes {_rel(included)}: lerobot-ros launch reads only YAML "
                            "launch files; write it in YAML or run this file with ros2 launch",
                        )
                    )
                elif os.path.isfile(included):
                    _static_walk(included, report, seen)

    visit(launch_file.entities)


def _all_parts(value):
    """Every Parts value inside an entity field (Parts, lists, pairs, params)."""
    if isinstance(value, tuple) and all(isinstance(p, (S.Text, S.Sub)) for p in value):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _all_parts(v)
    elif isinstance(value, (E.ParamValue, E.ParamFile)):
        for v in vars(value).values():
            yield from _all_parts(v)


def _share_links(path: str, report: Report) -> None:
    """A file found in share/PKG/launch must be reachable by ros2launch's os.walk (which skips folder links)."""
    for prefix in ament.prefixes():
        share = os.path.join(prefix, "share")
        if not os.path.abspath(path).startswith(share + os.sep):
            continue
        package = os.path.relpath(path, share).split(os.sep)[0]
        root = os.path.join(share, package)
        walked = {os.path.join(r, f) for r, _, files in os.walk(root) for f in files}
        if os.path.abspath(path) not in walked:
            report.findings.append(
                Finding(
                    "share-link",
                    _rel(path),
                    f"ros2 launch {package} {_rel(path)} will not find this file: a folder on its way in {root} is a "
                    "link, and ros2 launch does not follow folder links; link the files instead (re-run scripts/setup.sh)",
                )
            )


def _node_params(cmd: list) -> dict:
    params: dict = {}
    for i, arg in enumerate(cmd[:-1]):
        if arg == "--params-file":
            try:
                with open(cmd[i + 1], encoding="utf-8") as f:
                    data = yaml.safe_load(f) or {}
            except (OSError, yaml.YAMLError):
                continue
            for value in data.values():
                if isinstance(value, dict):
                    params.update(value.get("ros__parameters") or {})
    return params


def _where(source: str) -> str:
    """'/abs/path/f.launch.yaml:12' -> 'f.launch.yaml:12'."""
    path, _, line = source.rpartition(":")
    return f"{_rel(path)}:{line}" if path else source


def _dynamic(path: str, launch_args: dict, environ: dict | None, report: Report) -> None:
    try:
        plan = evaluate_file(path, launch_args, environ, collect_missing=True)
    except LaunchError as exc:
        report.findings.append(
            Finding(
                "evaluate",
                exc.file and f"{_rel(exc.file)}:{exc.line}" or _rel(path),
                f"{exc.message}; ros2 launch stops on this too",
            )
        )
        return
    try:
        for source, pkg, message in plan.missing:
            report.needed_by.setdefault(pkg, []).append(_where(source))
            kind = "missing-package" if ament.package_prefix(pkg, environ) is None else "missing-executable"
            report.findings.append(
                Finding(
                    kind,
                    _where(source),
                    f"{message}: ros2 launch ends the whole launch here (nodes already started "
                    "are left running); install it, or start this node only behind an argument that defaults to false",
                )
            )
        for proc in plan.processes:
            where = _where(proc.source)
            report.processes.append(proc.label)
            report.started_packages.add(proc.package)
            if proc.package is not None and where not in report.needed_by.setdefault(proc.package, []):
                report.needed_by[proc.package].append(where)
            exe = proc.cmd[0] if proc.package is None else None
            if exe is not None and not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
                report.findings.append(
                    Finding(
                        "missing-executable",
                        where,
                        f"{proc.label}: '{exe}' is not an executable file (nor on the "
                        "PATH): the process exits at once; fix the command or install it",
                    )
                )
            params = _node_params(proc.cmd)
            for name, (folder, hint) in REQUIRED_PARAMETERS.get((proc.package, proc.executable), {}).items():
                value = params.get(name)
                if value in (None, ""):
                    report.findings.append(
                        Finding(
                            "required-parameter",
                            where,
                            f"{proc.label} would exit at once: parameter {name} is empty; {hint}",
                        )
                    )
                elif folder and not os.path.isdir(os.path.expanduser(str(value))):
                    report.findings.append(
                        Finding(
                            "required-parameter",
                            where,
                            f"{proc.label} would exit at once: parameter {name} is '{value}', not a folder; {hint}",
                        )
                    )
    finally:
        plan.cleanup()


def check_file(path: str, launch_args: dict | None = None, environ: dict | None = None) -> Report:
    """All findings for `path` with these arguments (see module doc); never raises for a bad file."""
    report = Report(path)
    try:
        _static_walk(path, report, set())
    except LaunchError as exc:
        if not any(f.kind == "parse" for f in report.findings):  # else the raw scan named it already
            report.findings.append(
                Finding(
                    "parse",
                    exc.file and f"{_rel(exc.file)}:{exc.line}" or _rel(path),
                    f"{exc.message}; ros2 launch rejects it too",
                )
            )
        return report
    _share_links(path, report)
    _dynamic(path, dict(launch_args or {}), environ, report)
    for pkg in sorted(report.needed_by):
        report.packages[pkg] = ament.package_prefix(pkg, environ)
    return report


def format_report(report: Report) -> list[str]:
    lines = [f"check {report.path}"]
    for pkg, prefix in report.packages.items():
        where = ", ".join(report.needed_by[pkg][:3]) + (" ..." if len(report.needed_by[pkg]) > 3 else "")
        state = (
            f"installed ({prefix})"
            if prefix
            else "NOT installed"
            + ("" if pkg in report.started_packages else " (nothing that needs it starts with these arguments)")
        )
        lines.append(f"  package {pkg}: {state}; used at {where}")
    lines.append("  would start: " + (", ".join(report.processes) or "nothing"))
    for f in report.findings:
        lines.append(f"finding: {f}")
    lines.append(
        f"{len(report.findings)} finding(s)"
        + ("" if report.findings else ": runs the same under ros2 launch and lerobot-ros launch")
    )
    return lines
