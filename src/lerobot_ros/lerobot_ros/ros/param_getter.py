"""Parameter declaration for the hardware nodes (a ROS adapter, moved here from hardware/): numbers accept ints and floats alike.

rclpy refuses `rate_hz:=30` for a parameter declared as 30.0 (INTEGER vs DOUBLE), and `source:=0` for a
string; launch files and command lines write both, so numbers and strings are declared with dynamic
typing and converted here.
"""

from __future__ import annotations

from typing import Any, Callable

from rcl_interfaces.msg import ParameterDescriptor


def param_getter(node) -> Callable[[str, Any], Any]:
    """`p(name, default)`: declare `name` on `node` and return its value converted to type(default)."""

    def p(name: str, default):
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            value = node.declare_parameter(name, default, ParameterDescriptor(dynamic_typing=True)).value
            try:
                return type(default)(value)
            except (TypeError, ValueError):
                from lerobot_ros.ros.entry import NodeStartupError

                raise NodeStartupError(f"parameter {name!r} must be a number, got {value!r}") from None
        if isinstance(default, str):  # `source:=0` arrives as an integer
            return str(node.declare_parameter(name, default, ParameterDescriptor(dynamic_typing=True)).value)
        return node.declare_parameter(name, default).value

    return p
