"""launch's command-line splitting for `args`, `ros_args`, `cmd` and `launch-prefix`.

Text is split like a shell would (quotes group words); a substitution's value stays one word and text
written right against it is glued on: `$(find-pkg-share x)/a b` gives two arguments.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from lerobot_ros.launch_runner.substitutions import Parts, Sub


def split_cmdline(parts: Parts, render: Callable[[Sub], str]) -> list[str]:
    """Arguments of `parts`; `render` evaluates one substitution. Raises ValueError on unbalanced quotes."""
    args: list[str] = []
    current: str | None = None
    for part in parts:
        if isinstance(part, Sub):
            current = (current or "") + render(part)
            continue
        tokens = shlex.split(part.text)
        if not tokens:
            if current is not None:
                args.append(current)
                current = None
            continue
        if part.text[0].isspace() and current is not None:
            args.append(current)
            current = None
        first, rest = tokens[0], tokens[1:]
        current = (current or "") + first
        if rest:
            args.append(current)
            args.extend(rest[:-1])
            current = rest[-1]
        if part.text[-1].isspace():
            args.append(current)
            current = None
    if current is not None:
        args.append(current)
    return args
