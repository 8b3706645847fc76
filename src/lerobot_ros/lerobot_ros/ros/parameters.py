"""Node parameters from a component's config (`lerobot_ros.configs`): the ROS side of one declaration.

`declare_params(node, Config, on_change)`
- declares every setting under its public name (dots allowed: `policy.path`) with a ParameterDescriptor:
  description, units/range/choices in `additional_constraints`, an rcl FloatingPointRange / IntegerRange,
  and `read_only` unless the setting is reconfigurable (so `ros2 param describe` and rcl's
  describe_parameters service show all of it);
- converts what command lines and launch files spell loosely before rclpy's type check sees it:
  `fps:=30` for a double, `source:=0` for a string, `[1, 2]` for a double array, an unset array as [];
- validates type, range and choices (and the dataclass's own `__post_init__` cross-field checks) in one
  place, raising `NodeStartupError` with one line at start-up;
- at run time, refuses a read-only parameter with a reason (rclpy's read-only check) and validates a
  reconfigurable one, hands the new config to the node's `on_change(new, changed)` hook (raise ValueError
  to refuse with that reason; `changed` is keyed by public name), then replaces `Params.values`.
  Nothing is silently ignored.

The declaration, conversion and tables need no ROS: they live in `lerobot_ros.configs`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.parameter import Parameter

from lerobot_ros.configs.fields import ParameterError, ParamSpec, as_dict, build, coerce, specs
from lerobot_ros.ros.entry import NodeStartupError

T = TypeVar("T")
_INT64 = (-(2**63), 2**63 - 1)

#: Descriptions for the parameters rclpy declares on every node itself (so every parameter has one).
BUILTIN_DESCRIPTIONS = {
    "use_sim_time": "take time from /clock (simulation) instead of the system clock",
    "start_type_description_service": "serve the type descriptions of this node's interfaces (rclpy built-in)",
}


def ros_type(spec: ParamSpec) -> Parameter.Type:
    """The rclpy parameter type of a setting."""
    scalar = {bool: "BOOL", int: "INTEGER", float: "DOUBLE", str: "STRING"}[spec.kind]
    return Parameter.Type[scalar + ("_ARRAY" if spec.is_list else "")]


# ----- ROS side ------------------------------------------------------------------------------------
def descriptor(spec: ParamSpec) -> ParameterDescriptor:
    """The ParameterDescriptor `ros2 param describe` shows for `spec`."""
    d = ParameterDescriptor(
        name=spec.name,
        type=ros_type(spec).value,
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
    return Parameter(spec.name, ros_type(spec), value)


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
            raise NodeStartupError(_as_parameter_message(exc)) from None
        for name, spec in self._specs.items():
            value = getattr(values, spec.attr)
            if name in overrides:
                if spec.is_list and not value:
                    del overrides[name]  # an empty list has no element type: declared by type below
                else:
                    overrides[name] = _typed(spec, value)
            if spec.is_list and not value:
                # an empty default cannot carry its type: declare by type (value unset, read back as [])
                self.node.declare_parameter(name, ros_type(spec), descriptor(spec))
            else:
                self.node.declare_parameter(name, value, descriptor(spec))
        return values

    def _pre_set(self, parameters: list[Parameter]) -> list[Parameter]:
        """Convert loose spellings at run time too (`ros2 param set /camera_node fps 15`)."""
        out = []
        for p in parameters:
            spec = self._specs.get(p.name)
            if spec is not None and p.type_ != ros_type(spec) and p.type_ != Parameter.Type.NOT_SET:
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
            current = as_dict(self.values)
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
                return SetParametersResult(successful=False, reason=_as_parameter_message(exc))
            updated = as_dict(new)
            changed = {n: updated[n] for n in ours if updated[n] != current[n]}
            if changed and self.on_change is not None:
                try:
                    self.on_change(new, changed)
                except ValueError as exc:
                    return SetParametersResult(successful=False, reason=str(exc))
            self.values = new
        return SetParametersResult(successful=True)


def _as_parameter_message(exc: ParameterError) -> str:
    """A config error as a ROS user reads it: `parameter 'fps' must be > 0, got 0.0` (the configs layer names
    the setting only, since the same message serves a command-line flag)."""
    text = str(exc)
    return f"parameter {text}" if text.startswith("'") else text


def declare_params(node, cls: type[T], on_change: Callable[[T, dict[str, Any]], None] | None = None) -> Params[T]:
    """Declare `cls`'s parameters on `node`; see the module docstring. NodeStartupError for a bad value."""
    return Params(node, cls, on_change)
