"""Load a YAML launch file keeping the line of every mapping, list and key (for error messages).

PyYAML's SafeLoader builds the usual Python values; mappings and lists come back as `LDict` / `LList`
that also carry `line` (1-based) and, for mappings, `key_lines` (key -> line).
"""

from __future__ import annotations

import yaml

from lerobot_ros.launch_runner.errors import LaunchError


class LDict(dict):
    line: int = 0
    key_lines: dict

    def line_of(self, key) -> int:
        return getattr(self, "key_lines", {}).get(key, self.line)


class LList(list):
    line: int = 0


class _Loader(yaml.SafeLoader):
    """SafeLoader whose mappings and sequences remember where they start."""


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LDict:
    loader.flatten_mapping(node)
    out = LDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in out:
            raise LaunchError(f"duplicate key '{key}'", None, key_node.start_mark.line + 1)
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> LList:
    out = LList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def load_yaml(path: str):
    """Parse `path` into LDict/LList/scalars; a syntax error becomes a LaunchError with its line."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise LaunchError(f"cannot read launch file: {exc.strerror}", path) from None
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 (a SafeLoader subclass)
    except LaunchError as exc:
        exc.file = path
        raise LaunchError(exc.message, path, exc.line) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise LaunchError(f"invalid YAML: {problem}", path, mark.line + 1 if mark else None) from None
