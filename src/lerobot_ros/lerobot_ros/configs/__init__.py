"""Settings of every component, declared once (`param(...)` fields of a frozen dataclass), and the
project's vocabulary: the one public name of each concept a user types.

`fields`: the declaration, conversion and validation (no ROS); `cli`: command-line flags derived from a
config; `vocabulary`: the concept table the docs print and a test holds every surface to.
"""

from lerobot_ros.configs.fields import (
    ParameterError,
    ParamSpec,
    as_dict,
    build,
    live_names,
    markdown_table,
    names,
    param,
    parameter_rows,
    replace,
    spec_of,
    specs,
)

__all__ = [
    "ParamSpec",
    "ParameterError",
    "as_dict",
    "build",
    "live_names",
    "markdown_table",
    "names",
    "param",
    "parameter_rows",
    "replace",
    "spec_of",
    "specs",
]
