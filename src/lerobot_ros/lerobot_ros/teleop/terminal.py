"""Keys from a terminal without an X display: stdin in cbreak mode while open, one key's bytes per read.

A terminal sends bytes on press and auto-repeat; arrow keys come as ESC [ A..D, so an ESC is followed by a
short wait for the rest of its sequence. Any byte stream works (tests drive the nodes through a pty).
Shared by episode_keyboard, ee_teleop and takeover.
"""

from __future__ import annotations

import os
import select
import sys
import termios
import tty


class TerminalKeys:
    def __init__(self, fd: int | None = None, escape_timeout_s: float = 0.05):
        self.fd = sys.stdin.fileno() if fd is None else fd
        self.escape_timeout_s = escape_timeout_s
        self._saved: list | None = None

    def open(self) -> TerminalKeys:
        """cbreak mode when `fd` is a terminal (keys arrive at once, unechoed); restored by close()."""
        if os.isatty(self.fd) and self._saved is None:
            self._saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        return self

    def read_key(self) -> bytes:
        """Block for one key: its bytes (an arrow key whole), b"" at the end of input."""
        key = os.read(self.fd, 1)
        if key == b"\x1b" and select.select([self.fd], [], [], self.escape_timeout_s)[0]:
            key += os.read(self.fd, 2)
        return key

    def close(self) -> None:
        if self._saved is not None:
            try:
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            except (termios.error, OSError):  # the terminal is gone (its window closed, the ssh session ended)
                pass
            self._saved = None
