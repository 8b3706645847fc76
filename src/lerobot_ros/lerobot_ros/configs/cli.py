"""Command-line flags from a config dataclass: `--NAME` for each setting, in LeRobot's spelling.

A verb calls `add_arguments(parser, Config)` and later `from_args(Config, args)`; the flag, its help, type,
choices and default come from the same `param(...)` declaration a node's parameters come from, so the flag
and the parameter cannot be named differently. Flags look like LeRobot's (draccus): `--policy.path DIR`,
`--dataset.num_episodes=3`, `--videos=false`, `--env.task_ids=[0,3]` or `--env.task_ids 0,3`.
Defaults stay in the dataclass: a flag that is not given is not set, and `from_args` leaves it to the
config's own default.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from lerobot_ros.configs.fields import ParameterError, ParamSpec, build, coerce, format_value, specs

T = TypeVar("T")


def flag(name: str) -> str:
    """The command-line flag of a setting: `--` + its public name."""
    return f"--{name}"


def _type(spec: ParamSpec) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = coerce(spec, text)
        except ParameterError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return value

    parse.__name__ = spec.type_name  # argparse names the type in its error messages
    return parse


def _help(spec: ParamSpec, default: Any) -> str:
    parts = [spec.description]
    if spec.limits():
        parts.append(f"({spec.limits()})")
    if default is not None and default != [] and default != "":
        parts.append(f"[default: {format_value(default)}]")
    return " ".join(parts).replace("%", "%%")


def add_arguments(
    parser: argparse.ArgumentParser | Any,
    cls: type,
    *,
    only: Iterable[str] | None = None,
    exclude: Iterable[str] = (),
    defaults: dict[str, Any] | None = None,
    required: Iterable[str] = (),
    group_title: str | None = None,
) -> None:
    """Add `--NAME` for each setting of `cls` (or only those named), in declaration order.

    `defaults`: values the verb uses instead of the config's own (shown in the help); `required`: settings
    the verb cannot run without."""
    wanted = None if only is None else set(only)
    skip, must = set(exclude), set(required)
    defaults = defaults or {}
    target = parser.add_argument_group(group_title) if group_title else parser
    for spec in specs(cls):
        if (wanted is not None and spec.name not in wanted) or spec.name in skip:
            continue
        default = defaults.get(spec.name, spec.default)
        kwargs: dict[str, Any] = dict(dest=spec.name, default=argparse.SUPPRESS, help=_help(spec, default))
        if spec.kind is bool and not spec.is_list:
            kwargs.update(nargs="?", const=True, type=_type(spec), metavar="BOOL")
        else:
            kwargs.update(type=_type(spec), metavar=spec.name.rsplit(".", 1)[-1].upper())
            if spec.choices and not spec.is_list:
                kwargs["choices"] = spec.choices
        if spec.name in must:
            kwargs["required"] = True
        target.add_argument(flag(spec.name), **kwargs)


def given(args: argparse.Namespace, cls: type) -> dict[str, Any]:
    """The settings of `cls` that the command line set, by public name."""
    values = vars(args)
    return {s.name: values[s.name] for s in specs(cls) if s.name in values}


def from_args(cls: type[T], args: argparse.Namespace, defaults: dict[str, Any] | None = None, **extra: Any) -> T:
    """The config from the flags the user gave, the verb's `defaults` and `extra` values (by public name);
    ParameterError (one line) for a value the config refuses."""
    raw = dict(defaults or {})
    raw.update(given(args, cls))
    raw.update(extra)
    return build(cls, raw)
