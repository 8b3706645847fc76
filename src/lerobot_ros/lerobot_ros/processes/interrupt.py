"""Ctrl-C for the children of a process started in a script's background.

POSIX shells start background jobs with SIGINT ignored, and an ignored signal stays ignored across fork and
exec: every node, benchmark or test child would then ignore the SIGINT its supervisor sends for a clean stop,
and end in a timeout or SIGKILL (a recorder killed so loses its open episode's summary). A handled signal is
reset to its default in each exec'd child, so handling it here gives every child Ctrl-C back.
"""

from __future__ import annotations

import signal


def restore_default_sigint() -> bool:
    """Handle SIGINT as Python does by default if it is ignored; True when it was."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return False
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return True


__all__ = ["restore_default_sigint"]
