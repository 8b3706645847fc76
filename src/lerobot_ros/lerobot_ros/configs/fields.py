"""Typed settings: one frozen dataclass per component, one `param(...)` per setting, read by every surface.

A field made with `param(default, description, name=, unit=, min=, max=, choices=, reconfigurable=)` is a
setting; its type comes from the annotation (bool, int, float, str, list[...] of those, and `X | None` for a
command-line setting that may be left out). `name` is the public name (default: the field's name): the
node parameter, the launch argument and the command-line flag (`--NAME`) all use it, dots included
(`policy.path`), so a user types one name for one concept wherever they meet it.

From that one declaration
- `lerobot_ros.ros.parameters.declare_params` declares a node's parameters (descriptors, ranges, read-only
  unless reconfigurable, validation of run-time changes);
- `lerobot_ros.configs.cli.add_arguments` makes a verb's flags and `from_args` builds the config back;
- `markdown_table` renders the reference tables of the documentation.

Nothing here imports ROS: tests and the command line use it without a DDS participant.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from lerobot_ros.conventions.errors import UserError

T = TypeVar("T")
_KEY = "lerobot_ros.param"
_KINDS = (bool, int, float, str)


class ParameterError(UserError, ValueError):
    """A setting's value that cannot be used; the message names the setting and what it accepts."""


@dataclass(frozen=True)
class ParamSpec:
    """What `param()` records about one field (name, attribute, type and default are filled in by `specs`)."""

    description: str
    unit: str = ""
    min: float | None = None
    max: float | None = None
    min_exclusive: bool = False
    choices: tuple = ()
    reconfigurable: bool = False
    name: str = ""  # the public name: parameter, launch argument, `--flag`
    attr: str = ""  # the dataclass field
    kind: type = object  # bool, int, float, str
    is_list: bool = False
    optional: bool = False  # `X | None`: may be left unset (command-line settings only)
    default: Any = None

    @property
    def type_name(self) -> str:
        base = f"list[{self.kind.__name__}]" if self.is_list else self.kind.__name__
        return f"{base} | None" if self.optional else base

    def bounds(self) -> str:
        """The range as text ("> 0", "in [0, 100]"), "" when unbounded."""
        if self.min is not None and self.max is not None:
            return f"{'in (' if self.min_exclusive else 'in ['}{self.min:g}, {self.max:g}]"
        if self.min is not None:
            return f"{'>' if self.min_exclusive else '>='} {self.min:g}"
        if self.max is not None:
            return f"<= {self.max:g}"
        return ""

    def limits(self) -> str:
        """Unit, range and choices as text ("unit: Hz; > 0"), "" when there are none."""
        parts = []
        if self.unit:
            parts.append(f"unit: {self.unit}")
        if self.bounds():
            parts.append(self.bounds())
        if self.choices:
            parts.append("one of: " + ", ".join(map(str, self.choices)))
        return "; ".join(parts)

    def constraints(self) -> str:
        """What `ros2 param describe` shows as additional constraints: the limits and whether it is live."""
        live = "reconfigurable at run time" if self.reconfigurable else "read-only (restart the node to change it)"
        return "; ".join(p for p in (self.limits(), live) if p)


def param(
    default: Any,
    description: str,
    *,
    name: str = "",
    unit: str = "",
    min: float | None = None,  # reads as the constraint it is
    max: float | None = None,
    min_exclusive: bool = False,
    choices: Sequence[Any] = (),
    reconfigurable: bool = False,
) -> Any:  # a dataclasses.field(); Any so that `x: int = param(0, ...)` type-checks, as with field()
    """A dataclass field that is a setting. `name`: its public name when it differs from the field's (dots
    group it: `policy.path`); `min_exclusive`: the value must be > min (e.g. a rate)."""
    if not description.strip():
        raise TypeError("every setting needs a description")
    spec = ParamSpec(description.strip(), unit, min, max, min_exclusive, tuple(choices), reconfigurable, name)
    if isinstance(default, (list, tuple)):
        items = list(default)
        return dataclasses.field(default_factory=lambda: list(items), metadata={_KEY: spec})
    return dataclasses.field(default=default, metadata={_KEY: spec})


_SPECS: dict[type, tuple[ParamSpec, ...]] = {}


def _unwrap(hint: Any) -> tuple[type, bool, bool]:
    """(scalar kind, is_list, optional) of an annotation such as `list[float]` or `str | None`."""
    optional = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        optional = len(args) < len(typing.get_args(hint))
        if len(args) != 1:
            raise TypeError(f"unsupported setting type {hint!r}")
        hint = args[0]
    is_list = typing.get_origin(hint) in (list, tuple, Sequence)
    kind = typing.get_args(hint)[0] if is_list else hint
    return kind, is_list, optional


def specs(cls: type) -> tuple[ParamSpec, ...]:
    """The setting specs of a config dataclass, in field order, with name, type and default filled in."""
    if cls in _SPECS:
        return _SPECS[cls]
    hints = typing.get_type_hints(cls)
    out, seen = [], set()
    for f in dataclasses.fields(cls):
        spec = f.metadata.get(_KEY)
        if spec is None:
            raise TypeError(f"{cls.__name__}.{f.name} is not a param(...) field")
        kind, is_list, optional = _unwrap(hints[f.name])
        if kind not in _KINDS:
            raise TypeError(f"{cls.__name__}.{f.name}: unsupported setting type {hints[f.name]!r}")
        default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
        spec = dataclasses.replace(
            spec, name=spec.name or f.name, attr=f.name, kind=kind, is_list=is_list, optional=optional, default=default
        )
        if spec.name in seen:
            raise TypeError(f"{cls.__name__}: two settings are named {spec.name!r}")
        seen.add(spec.name)
        if default is not None or not optional:
            check(spec, default)  # a default that breaks its own constraints is a programming error
        out.append(spec)
    _SPECS[cls] = tuple(out)
    return _SPECS[cls]


def spec_of(cls: type, name: str) -> ParamSpec:
    """The spec of the setting with public name `name`."""
    for spec in specs(cls):
        if spec.name == name:
            return spec
    raise KeyError(f"{cls.__name__} has no setting {name!r}")


def names(cls: type) -> list[str]:
    """The public names of `cls`'s settings, in order."""
    return [s.name for s in specs(cls)]


def live_names(cls: type) -> tuple[str, ...]:
    """The settings that may change while the component runs (declared `reconfigurable`)."""
    return tuple(s.name for s in specs(cls) if s.reconfigurable)


# ----- conversion and validation -------------------------------------------------------------------
def _scalar(spec: ParamSpec, value: Any) -> bool | int | float | str:
    kind = spec.kind
    if kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                pass
    elif kind is str:
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):  # `source:=0` arrives as an integer
            return str(value)
    elif kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no", "on", "off"):
            return value.lower() in ("true", "1", "yes", "on")
    what = {float: "a number", int: "an integer", str: "a string", bool: "true or false"}[kind]
    raise ParameterError(f"{spec.name!r} must be {what}{' (each item)' if spec.is_list else ''}, got {value!r}")


def _items(spec: ParamSpec, value: Any) -> list[Any]:
    """A list from a list, a numpy array, or text as a command line writes it: `[1, 2]` or `1,2`."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            import yaml

            try:
                value = yaml.safe_load(text)
            except yaml.YAMLError:
                raise ParameterError(f"{spec.name!r} must be a list such as [1, 2], got {text!r}") from None
        else:
            value = [v.strip() for v in text.split(",") if v.strip()]
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise ParameterError(f"{spec.name!r} must be a list of {spec.kind.__name__}, got {value!r}")
    return list(value)


def coerce(spec: ParamSpec, value: Any) -> Any:
    """`value` as the spec's type (int for a float, number for a string, ...); ParameterError otherwise."""
    if value is None:
        if spec.optional:
            return None
        if spec.is_list:  # declared without a value (an empty default) or unset on the command line
            return []
        raise ParameterError(f"{spec.name!r} has no value; give a {spec.type_name}")
    if spec.is_list:
        return [_scalar(spec, v) for v in _items(spec, value)]
    return _scalar(spec, value)


def check(spec: ParamSpec, value: Any) -> None:
    """Range and choices; ParameterError naming the setting and the constraint otherwise."""
    if value is None and spec.optional:
        return
    for v in value if spec.is_list else [value]:
        if spec.kind in (int, float):
            if isinstance(v, float) and math.isnan(v):
                raise ParameterError(f"{spec.name!r} must be a number, got nan")
            low_bad = spec.min is not None and (v <= spec.min if spec.min_exclusive else v < spec.min)
            if low_bad or (spec.max is not None and v > spec.max):
                raise ParameterError(f"{spec.name!r} must be {spec.bounds()}, got {v!r}")
        if spec.choices and v not in spec.choices:
            raise ParameterError(f"{spec.name!r} must be one of {', '.join(map(str, spec.choices))}, got {v!r}")


def build(cls: type[T], raw: dict[str, Any]) -> T:
    """A config from raw values keyed by public name (missing ones take their defaults): coerced, checked,
    then the dataclass's own `__post_init__` (cross-field checks raising ValueError) runs. ParameterError
    otherwise, also for a name `cls` does not have."""
    by_name = {s.name: s for s in specs(cls)}
    unknown = sorted(set(raw) - set(by_name))
    if unknown:
        raise ParameterError(f"{cls.__name__} has no setting {', '.join(map(repr, unknown))}")
    values = {}
    for spec in by_name.values():
        value = coerce(spec, raw[spec.name]) if spec.name in raw else spec.default
        check(spec, value)
        values[spec.attr] = value
    try:
        return cls(**values)
    except ParameterError:
        raise
    except (TypeError, ValueError) as exc:
        raise ParameterError(str(exc)) from None


def replace(config: T, **changes_by_name: Any) -> T:
    """`config` with some settings changed, by public name (dots allowed through `**{"policy.path": p}`),
    validated like `build`."""
    raw = as_dict(config)
    raw.update(changes_by_name)
    return build(type(config), raw)


def as_dict(config: object) -> dict[str, Any]:
    """Public name -> value of every setting of `config`."""
    return {s.name: getattr(config, s.attr) for s in specs(type(config))}


def format_value(value: Any) -> str:
    """A value as a launch file or params YAML writes it: true, 30.0, "front", ["a", "b"]."""
    return json.dumps(value)


def parameter_rows(cls: type) -> list[dict[str, str]]:
    """One row per setting (name, type, default, live, limits, description): the generated tables."""
    return [
        {
            "name": s.name,
            "type": s.type_name,
            "default": format_value(s.default),
            "live": "yes" if s.reconfigurable else "no",
            "limits": s.limits(),
            "description": s.description,
        }
        for s in specs(cls)
    ]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def markdown_table(cls: type) -> str:
    """The settings of `cls` as a Markdown table (live = reconfigurable at run time)."""
    rows = ["| parameter | type | default | live | unit / range | description |", "|---|---|---|---|---|---|"]
    for r in parameter_rows(cls):
        rows.append(
            f"| `{r['name']}` | {r['type']} | `{r['default']}` | {r['live']} | {_cell(r['limits'])} | "
            f"{_cell(r['description'])} |"
        )
    return "\n".join(rows)
