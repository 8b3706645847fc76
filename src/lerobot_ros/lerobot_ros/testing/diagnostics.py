"""Reading /diagnostics in tests: the newest status of one name, as plain values."""

from __future__ import annotations


def newest_status(collector, name: str) -> dict:
    """The newest DiagnosticStatus called `name` among a MessageCollector's DiagnosticArrays, as {"level": int,
    "message": str, key: value ...}; {} when none came yet (rclpy gives the byte field `level` as bytes)."""
    for array in reversed(collector.messages):
        for s in array.status:
            if s.name == name:
                level = s.level if isinstance(s.level, int) else ord(s.level)
                return {"level": level, "message": s.message, **{kv.key: kv.value for kv in s.values}}
    return {}
