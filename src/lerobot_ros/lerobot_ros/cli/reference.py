"""Every name a user can type, collected from where it is declared: the flags of each verb (its parser), the
parameters of each node (its config), the arguments of each launch file and the node parameters the
launch files set. The vocabulary test holds them to `lerobot_ros.configs.vocabulary`, and the
documentation's reference pages are generated from the same functions, so neither can drift from the code.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Surface:
    """One place a name is typed: `kind` (flag, parameter, launch argument, launch parameter), where, the name."""

    kind: str
    where: str
    name: str


def verb_parsers() -> dict[str, argparse.ArgumentParser]:
    """verb -> its parser, every verb's module imported."""
    from lerobot_ros.cli.main import VERBS, build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {verb: sub.choices[verb] for verb in VERBS}


def cli_flags() -> dict[str, list[str]]:
    """verb -> its long flags (without `--help`)."""
    out = {}
    for verb, p in verb_parsers().items():
        out[verb] = [s for a in p._actions for s in a.option_strings if s.startswith("--") and s != "--help"]
    return out


def node_configs() -> dict[str, type]:
    """node executable (as `ros2 run lerobot_ros EXE` names it) -> the config its parameters come from."""
    from importlib.metadata import distribution

    from lerobot_ros.nodes.parameter_tables import node_params

    by_module = node_params()
    out = {}
    for ep in distribution("lerobot_ros").entry_points.select(group="console_scripts"):
        module = ep.value.split(":")[0]
        if module.startswith("lerobot_ros.nodes.") and module.rsplit(".", 1)[-1] in by_module:
            out[ep.name] = by_module[module.rsplit(".", 1)[-1]]
    return dict(sorted(out.items()))


def node_parameters() -> dict[str, list[str]]:
    """node executable -> the parameters it declares (from its config)."""
    from lerobot_ros.configs import names

    return {node: names(cls) for node, cls in node_configs().items()}


def launch_files(folder: Path | None = None) -> list[Path]:
    """The shipped launch files."""
    if folder is None:
        from lerobot_ros.launch_runner.ament import package_prefix

        prefix = package_prefix("lerobot_ros")
        if prefix is None:
            return []
        folder = Path(prefix) / "share" / "lerobot_ros" / "launch"
    return sorted(Path(folder).glob("*.launch.yaml"))


def _text(parts) -> str | None:
    """The literal text of a name (None when it holds a substitution)."""
    from lerobot_ros.launch_runner.substitutions import Text

    if not all(isinstance(p, Text) for p in parts):
        return None
    return "".join(p.text for p in parts)


def _walk(entities) -> Iterator:
    from lerobot_ros.launch_runner import entities as E

    for e in entities:
        yield e
        if isinstance(e, E.Group):
            yield from _walk(e.children)


def launch_arguments(folder: Path | None = None) -> dict[str, list[str]]:
    """launch file -> the arguments it declares."""
    from lerobot_ros.launch_runner import entities as E
    from lerobot_ros.launch_runner.parser import parse_file

    return {
        path.name: [e.name for e in _walk(parse_file(str(path)).entities) if isinstance(e, E.Arg)]
        for path in launch_files(folder)
    }


def launch_node_parameters(folder: Path | None = None) -> list[tuple[str, str, str]]:
    """(launch file, node executable, parameter name) for every literal parameter a launch file sets."""
    from lerobot_ros.launch_runner import entities as E
    from lerobot_ros.launch_runner.parser import parse_file

    out = []
    for path in launch_files(folder):
        for e in _walk(parse_file(str(path)).entities):
            executable = _text(e.exec_) if isinstance(e, E.Node) else None
            if executable:
                for p in e.params:
                    name = _text(p.name) if isinstance(p, E.ParamValue) else None
                    if name:
                        out.append((path.name, executable, name))
    return out


def surfaces(launch_folder: Path | None = None) -> list[Surface]:
    """Every flag, node parameter and launch argument, where it is declared."""
    out = [Surface("flag", f"lerobot-ros {verb}", flag) for verb, flags in cli_flags().items() for flag in flags]
    out += [Surface("parameter", node, name) for node, names in node_parameters().items() for name in names]
    out += [
        Surface("launch argument", file, name)
        for file, names in launch_arguments(launch_folder).items()
        for name in names
    ]
    return out
