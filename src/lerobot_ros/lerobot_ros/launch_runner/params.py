"""Node parameters as launch_ros passes them: `param` name/value lists become a temporary params file
keyed by the node's full name (or `/**`), `from` files are passed as they are (or substituted first with
`allow_substs`). String values are read as YAML after substitution, like launch_ros does, unless a
`type` is given.
"""

from __future__ import annotations

import os
import tempfile
from typing import TYPE_CHECKING, Any, NoReturn

import yaml

from lerobot_ros.launch_runner import entities as E
from lerobot_ros.launch_runner import substitutions as S


class ParamsMixin:
    """Parameter handling of the Evaluator (uses its `text`, `fail`, `scope` and `plan`)."""

    if TYPE_CHECKING:  # provided by the Evaluator
        plan: Any  # evaluate.Plan (not imported: evaluate imports this module)

        def text(self, parts, ent: E.Entity, what: str) -> str: ...
        def fail(self, message: str, ent: E.Entity, line: int | None = None) -> NoReturn: ...
        def scope(self, file): ...

    def param_arguments(self, ent: E.Node, key: str) -> list[str]:
        out: list[str] = []
        pending: dict = {}

        def flush():
            if pending:
                out.extend(["--params-file", self.write_temp({key: {"ros__parameters": dict(pending)}})])
                pending.clear()

        for p in ent.params:
            if isinstance(p, E.ParamFile):
                flush()
                out.extend(["--params-file", self.param_file(p, ent)])
            else:
                name, value = self.param_value(p, ent)
                pending[name] = value
        flush()
        return out

    def write_temp(self, data: dict | str) -> str:
        fd, path = tempfile.mkstemp(prefix="launch_params_", suffix=".yaml")
        with os.fdopen(fd, "w") as f:
            f.write(data if isinstance(data, str) else yaml.safe_dump(data, default_flow_style=False))
        self.plan.temp_files.append(path)
        return path

    def param_file(self, p: E.ParamFile, ent: E.Node) -> str:
        path = self.text(p.path, ent, "param from")
        if not os.path.isfile(path):
            self.fail(f"parameter file not found: {path}", ent, p.line)
        if not p.allow_substs:
            return os.path.abspath(path)
        with open(path, encoding="utf-8") as f:
            raw = f.read()
        try:
            return self.write_temp(S.evaluate(S.parse(raw), self.scope(ent.file)))
        except S.SubstitutionError as exc:
            self.fail(f"in parameter file {path}: {exc}", ent, p.line)

    def param_value(self, p: E.ParamValue, ent: E.Node):
        name = self.text(p.name, ent, "param name")
        if p.children:
            return name, dict(self.param_value(c, ent) for c in p.children)
        try:
            value = self.typed(p.value, p.type, ent)
            if isinstance(value, list) and len({type(v) for v in value}) > 1:
                raise ValueError("a list parameter must hold values of one type after substitution")
        except ValueError as exc:
            self.fail(f"parameter '{name}': {exc}", ent, p.line)
        return name, value

    def typed(self, value, ptype: str | None, ent: E.Node):
        if isinstance(value, list):
            inner = ptype[5:-1] if ptype and ptype.startswith("list[") else None
            if ptype and not inner:
                raise ValueError(f"type {ptype} given for a list value")
            return [self.typed(v, inner, ent) for v in value]
        if isinstance(value, tuple):  # Parts: substitute, then read as YAML like launch_ros does
            text = self.text(value, ent, "param value")
            if ptype == "str":
                return text
            if ptype and ptype.startswith("list["):
                loaded = yaml.safe_load(text) if text else []
                if not isinstance(loaded, list):
                    raise ValueError(f"'{text}' is not a list")
                return [self.typed(v, ptype[5:-1], ent) for v in loaded]
            try:
                loaded = yaml.safe_load(text) if text else text
            except yaml.YAMLError:
                loaded = text
            if not isinstance(loaded, (bool, int, float, str, list)):
                loaded = text
            return loaded if ptype is None else _coerce(loaded, ptype)
        return value if ptype is None else _coerce(value, ptype)


def _coerce(value, ptype: str):
    if ptype == "str":
        return value if isinstance(value, str) else (str(value).lower() if isinstance(value, bool) else str(value))
    if ptype == "bool":
        if isinstance(value, bool):
            return value
        raise ValueError(f"{value!r} is not a bool")
    if ptype == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ValueError(f"{value!r} is not an int")
    if ptype == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ValueError(f"{value!r} is not a float")
    raise ValueError(f"unsupported type {ptype}")
