"""The one error type of the launch runner: says which file, which line and which tag is wrong."""

from __future__ import annotations

from lerobot_ros.conventions.errors import UserError


class LaunchError(UserError):
    """A launch file cannot be parsed, evaluated or run. `str()` is the one-line message for the user."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None, tag: str | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.tag = tag
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line else "") + ": "
        tag = f"<{self.tag}> " if self.tag else ""
        return f"{where}{tag}{self.message}"
