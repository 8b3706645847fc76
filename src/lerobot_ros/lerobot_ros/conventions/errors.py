"""The one base class of every failure a user can cause and fix (a bad path, file, flag or topic).

Library errors that mean "your input is wrong, here is what to do" derive from `UserError`; the command
line turns any of them into one line and exit code 1 (`lerobot_ros.cli.main.EXIT_CODES`), and a node into
one line at start-up. Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """An expected failure: its message is one line that says what is wrong and what to do."""
