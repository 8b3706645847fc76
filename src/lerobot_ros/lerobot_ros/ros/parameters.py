"""One declared-parameter layer for every node: a frozen dataclass per node, declared by `declare_params`.

Each field is made with `param(default, description, unit=, min=, max=, choices=, reconfigurable=)`; its
type comes from the annotation (bool, int, float, str, list[float], list[int], list[str], list[bool]).
`declare_params(node, Cls, on_change)` then

- declares every field with a ParameterDescriptor: description, units/range/choices in
  `additional_constraints`, an rcl FloatingPointRange / IntegerRange, and `read_only` unless the field
  is reconfigurable (so `ros2 param describe` and rcl's describe_parameters service show all of it);
- converts what command lines and launch files spell loosely before rclpy's type check sees it:
  `fps:=30` for a double, `source:=0` for a string, `[1, 2]` for a double array, an unset array as [];
- validates type, range and choices (and the dataclass's own `__post_init__` cross-field checks) in one
  place, raising `NodeStartupError` with one line at start-up;
- at run time, refuses a read-only parameter with a reason (rclpy's read-only check) and validates a
  reconfigurable one, hands the new dataclass to the node's `on_change(new, changed)` hook (raise
  ValueError to refuse with that reason), then replaces `Params.values`. Nothing is silently ignored.

The parts that need no ROS (`spec_of`, `coerce`, `build`, `parameter_rows`) are what tests, README tables
and launch-file checks use.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.parameter import Parameter

from lerobot_ros.ros.entry import NodeStartupError

T = TypeVar("T")
_KEY = "lerobot_ros.param"
_INT64 = (-(2**63), 2**63 - 1)

#: Descriptions for the parameters rclpy declares on every node itself (so every parameter has one).
BUILTIN_DESCRIPTIONS = {
    "use_sim_time": "take time from /clock (simulation) instead of the system clock",
    "start_type_description_service": "serve the type descriptions of this node's interfaces (rclpy built-in)",
}


class ParameterError(ValueError):
    """A parameter value that cannot be used; the message names the parameter and what it accepts."""


@dataclass(frozen=True)
class ParamSpec:
    """What `param()` records about one field (the name and type are filled in by `specs`)."""

    description: str
    unit: str = ""
    min: float | None = None
    max: float | None = None
    min_exclusive: bool = False
    choices: tuple = ()
    reconfigurable: bool = False
    name: str = ""
    kind: type = object  # bool, int, float, str
    is_list: bool = False
    default: Any = None

    @property
    def ros_type(self) -> Parameter.Type:
        scalar = {bool: "BOOL", int: "INTEGER", float: "DOUBLE", str: "STRING"}[self.kind]
        return Parameter.Type[scalar + ("_ARRAY" if self.is_list else "")]

    @property
    def type_name(self) -> str:
        return f"list[{self.kind.__name__}]" if self.is_list else self.kind.__name__

    def bounds(self) -> str:
        """The range as text ("> 0", "[0, 100]"), "" when unbounded."""
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
    default,
    description: str,
    *,
    unit: str = "",
    min: float | None = None,  # noqa: A002 - reads as the constraint it is
    max: float | None = None,  # noqa: A002
    min_exclusive: bool = False,
    choices: Sequence = (),
    reconfigurable: bool = False,
):
    """A dataclass field that is a node parameter. `min_exclusive`: the value must be > min (e.g. a rate)."""
    if not description.strip():
        raise TypeError("every parameter needs a description")
    spec = ParamSpec(description.strip(), unit, min, max, min_exclusive, tuple(choices), reconfigurable)
    if isinstance(default, (list, tuple)):
        items = list(default)
        return dataclasses.field(default_factory=lambda: list(items), metadata={_KEY: spec})
    return dataclasses.field(default=default, metadata={_KEY: spec})


_SPECS: dict[type, tuple[ParamSpec, ...]] = {}


def specs(cls: type) -> tuple[ParamSpec, ...]:
    """The parameter specs of a params dataclass, in field order, with name, type and default filled in."""
    if cls in _SPECS:
        return _SPECS[cls]
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        spec = f.metadata.get(_KEY)
        if spec is None:
            raise TypeError(f"{cls.__name__}.{f.name} is not a param(...) field")
        hint = hints[f.name]
        is_list = typing.get_origin(hint) in (list, tuple, Sequence)
        kind = typing.get_args(hint)[0] if is_list else hint
        if kind not in (bool, int, float, str):
            raise TypeError(f"{cls.__name__}.{f.name}: unsupported parameter type {hint!r}")
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        spec = dataclasses.replace(spec, name=f.name, kind=kind, is_list=is_list, default=default)
        check(spec, default)  # a default that breaks its own constraints is a programming error
        out.append(spec)
    _SPECS[cls] = tuple(out)
    return _SPECS[cls]


def spec_of(cls: type, name: str) -> ParamSpec:
    for spec in specs(cls):
        if spec.name == name:
            return spec
    raise KeyError(f"{cls.__name__} has no parameter {name!r}")


def names(cls: type) -> list[str]:
    return [s.name for s in specs(cls)]


# ----- conversion and validation (no ROS needed) ---------------------------------------------------
def _scalar(spec: ParamSpec, value):
    kind = spec.kind
    if kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
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
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    what = {float: "a number", int: "an integer", str: "a string", bool: "true or false"}[kind]
    raise ParameterError(
        f"parameter {spec.name!r} must be {what}{' (each item)' if spec.is_list else ''}, got {value!r}"
    )


def coerce(spec: ParamSpec, value):
    """`value` as the spec's type (int for a float, number for a string, ...); ParameterError otherwise."""
    if spec.is_list:
        if value is None:  # declared without a value (an empty default) or unset on the command line
            return []
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)) and not hasattr(value, "tolist"):
            raise ParameterError(f"parameter {spec.name!r} must be a list of {spec.kind.__name__}, got {value!r}")
        return [_scalar(spec, v) for v in (value.tolist() if hasattr(value, "tolist") else value)]
    if value is None:
        raise ParameterError(f"parameter {spec.name!r} has no value; give a {spec.type_name}")
    return _scalar(spec, value)


def check(spec: ParamSpec, value) -> None:
    """Range and choices; ParameterError naming the parameter and the constraint otherwise."""
    for v in value if spec.is_list else [value]:
        if spec.kind in (int, float):
            if isinstance(v, float) and math.isnan(v):
                raise ParameterError(f"parameter {spec.name!r} must be a number, got nan")
            low_bad = spec.min is not None and (v <= spec.min if spec.min_exclusive else v < spec.min)
            if low_bad or (spec.max is not None and v > spec.max):
                raise ParameterError(f"parameter {spec.name!r} must be {spec.bounds()}, got {v!r}")
        if spec.choices and v not in spec.choices:
            raise ParameterError(
                f"parameter {spec.name!r} must be one of {', '.join(map(str, spec.choices))}, got {v!r}"
            )


def build(cls: type[T], raw: dict[str, Any]) -> T:
    """A params instance from raw values (missing ones take their defaults): coerced, checked, then the
    dataclass's own `__post_init__` (cross-field checks raising ValueError) runs. ParameterError otherwise."""
    values = {}
    for spec in specs(cls):
        value = coerce(spec, raw[spec.name]) if spec.name in raw else spec.default
        check(spec, value)
        values[spec.name] = value
    try:
        return cls(**values)
    except ParameterError:
        raise
    except (TypeError, ValueError) as exc:
        raise ParameterError(str(exc)) from None


def format_value(value) -> str:
    """A value as a launch file or params YAML writes it: true, 30.0, "front", ["a", "b"]."""
    return json.dumps(value)


def parameter_rows(cls: type) -> list[dict[str, str]]:
    """One row per parameter (name, type, default, live, limits, description): the generated tables."""
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
    """The parameters of `cls` as a Markdown table (live = reconfigurable at run time)."""
    rows = ["| parameter | type | default | live | unit / range | description |", "|---|---|---|---|---|---|"]
    for r in parameter_rows(cls):
        rows.append(
            f"| `{r['name']}` | {r['type']} | `{r['default']}` | {r['live']} | {_cell(r['limits'])} | "
            f"{_cell(r['description'])} |"
        )
    return "\n".join(rows)


# ----- ROS side ------------------------------------------------------------------------------------
def descriptor(spec: ParamSpec) -> ParameterDescriptor:
    """The ParameterDescriptor `ros2 param describe` shows for `spec`."""
    d = ParameterDescriptor(
        name=spec.name,
        type=spec.ros_type.value,
        description=spec.description,
        additional_constraints=spec.constraints(),
        read_only=not spec.reconfigurable,
    )
    if not spec.is_list and spec.kind in (int, float) and (spec.min is not None or spec.max is not None):
        if spec.kind is float:
            low = -math.inf if spec.min is None else float(spec.min)
            high = math.inf if spec.max is None else float(spec.max)
            d.floating_point_range = [FloatingPointRange(from_value=low, to_value=high, step=0.0)]
        else:
            low = _INT64[0] if spec.min is None else int(spec.min) + (1 if spec.min_exclusive else 0)
            high = _INT64[1] if spec.max is None else int(spec.max)
            d.integer_range = [IntegerRange(from_value=low, to_value=high, step=0)]
    return d


def _typed(spec: ParamSpec, value) -> Parameter:
    return Parameter(spec.name, spec.ros_type, value)


class Params(Generic[T]):
    """A node's declared parameters: `values` is the current (frozen) dataclass, replaced on each accepted change."""

    def __init__(self, node, cls: type[T], on_change: Callable[[T, dict[str, Any]], None] | None = None):
        self.node, self.cls, self.on_change = node, cls, on_change
        self._specs = {s.name: s for s in specs(cls)}
        self._lock = threading.Lock()
        self.values: T = self._declare()
        node.add_pre_set_parameters_callback(self._pre_set)
        node.add_on_set_parameters_callback(self._on_set)
        for name, text in BUILTIN_DESCRIPTIONS.items():
            if node.has_parameter(name) and not node.describe_parameter(name).description:
                node.describe_parameter(name).description = text  # the stored descriptor itself

    def _declare(self) -> T:
        # rclpy's declare_parameter reads command-line / launch overrides and type-checks them against the
        # declared type before any callback runs, so loose spellings (`fps:=30`) are converted in the
        # override table first. rclpy has no public accessor for it; `_parameter_overrides` is where
        # Node.__init__ keeps them (rclpy/node.py).
        overrides = getattr(self.node, "_parameter_overrides", {})
        raw = {}
        for name in self._specs:
            if name in overrides:
                raw[name] = overrides[name].value
        try:
            values = build(self.cls, raw)
        except ParameterError as exc:
            raise NodeStartupError(str(exc)) from None
        for name, spec in self._specs.items():
            value = getattr(values, name)
            if name in overrides:
                if spec.is_list and not value:
                    del overrides[name]  # an empty list has no element type: declared by type below
                else:
                    overrides[name] = _typed(spec, value)
            if spec.is_list and not value:
                # an empty default cannot carry its type: declare by type (value unset, read back as [])
                self.node.declare_parameter(name, spec.ros_type, descriptor(spec))
            else:
                self.node.declare_parameter(name, value, descriptor(spec))
        return values

    def _pre_set(self, parameters: list[Parameter]) -> list[Parameter]:
        """Convert loose spellings at run time too (`ros2 param set /camera_node fps 15`)."""
        out = []
        for p in parameters:
            spec = self._specs.get(p.name)
            if spec is not None and p.type_ != spec.ros_type and p.type_ != Parameter.Type.NOT_SET:
                try:
                    p = _typed(spec, coerce(spec, p.value))
                except ParameterError:
                    pass  # left as it is: rclpy refuses it with its type error
            out.append(p)
        return out

    def _on_set(self, parameters: list[Parameter]) -> SetParametersResult:
        ours = {p.name: p for p in parameters if p.name in self._specs}
        if not ours:
            return SetParametersResult(successful=True)
        with self._lock:
            current = dataclasses.asdict(self.values)
            raw = dict(current)
            for name, p in ours.items():
                if not self._specs[name].reconfigurable:  # declared read-only: rclpy refuses these first
                    return SetParametersResult(
                        successful=False, reason=f"{name} is read-only: restart the node to change it"
                    )
                raw[name] = p.value
            try:
                new = build(self.cls, raw)
            except ParameterError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
            changed = {n: getattr(new, n) for n in ours if getattr(new, n) != current[n]}
            if changed and self.on_change is not None:
                try:
                    self.on_change(new, changed)
                except ValueError as exc:
                    return SetParametersResult(successful=False, reason=str(exc))
            self.values = new
        return SetParametersResult(successful=True)


def declare_params(node, cls: type[T], on_change: Callable[[T, dict[str, Any]], None] | None = None) -> Params[T]:
    """Declare `cls`'s parameters on `node`; see the module docstring. NodeStartupError for a bad value."""
    return Params(node, cls, on_change)
